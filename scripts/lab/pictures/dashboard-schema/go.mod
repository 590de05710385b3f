// The dashboard schema check (see main.go): Grafana's dashboard schema as the Grafana Foundation
// SDK's Go types hold it. v0.0.22 is the only version of the Go module the proxy serves; the
// npm package the dashboard is built with is 0.0.21, generated from the same schemas two weeks apart.
module echoperator.local/monitoring/dashboard-schema

go 1.26.0

require github.com/grafana/grafana-foundation-sdk/go v0.0.22
