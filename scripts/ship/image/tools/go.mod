// The image tools: a pause program for pod sandboxes, an image writer (mkimage), a pusher of OCI
// archives to a registry (ocipush) and a checker of OCI archives against the image-spec's own
// schemas (ocivalidate). Images are assembled and pushed with go-containerregistry (layers,
// configs, indexes, digests, layouts, the registry API) so that no image format is hand-packed.
module echoperator.local/controlplane/images

go 1.24.0

require (
	github.com/google/go-containerregistry v0.20.6
	github.com/opencontainers/image-spec v1.1.1
)

require (
	github.com/containerd/stargz-snapshotter/estargz v0.16.3 // indirect
	github.com/docker/cli v28.2.2+incompatible // indirect
	github.com/docker/distribution v2.8.3+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.3 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/mitchellh/go-homedir v1.1.0 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
	github.com/sirupsen/logrus v1.9.3 // indirect
	github.com/vbatts/tar-split v0.12.1 // indirect
	golang.org/x/sync v0.15.0 // indirect
	golang.org/x/sys v0.33.0 // indirect
)
