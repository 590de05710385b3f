// Command registry is the distribution registry (github.com/distribution/distribution/v3) as its
// cmd/registry builds it, with the storage drivers the test bed uses only: filesystem (the
// cluster folder) and inmemory. cmd/registry also links the Azure, GCS and S3 drivers and their
// cloud SDKs, two thirds of its packages, which a loopback registry never reaches.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	// RootCmd's `serve` exits by itself on failure; Execute's error is cobra's (a bad flag).
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
