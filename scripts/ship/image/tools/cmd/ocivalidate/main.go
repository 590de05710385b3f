// ocivalidate checks an OCI archive (an OCI image layout packed in a tar, as mkimage writes it)
// against the OCI image-spec's own JSON schemas (github.com/opencontainers/image-spec/schema): the
// oci-layout file, index.json, and every index, manifest and image config it reaches; and that
// every blob it reaches is present with the digest and size its descriptor gives. It prints one
// line per document checked and exits 1 with every failure listed when any fails.
//
//	ocivalidate ARCHIVE.tar
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opencontainers/image-spec/schema"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

type checker struct {
	files    map[string][]byte
	failures []string
}

func (c *checker) fail(format string, args ...any) {
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

func (c *checker) validate(what string, v schema.Validator, body []byte) bool {
	if err := v.Validate(bytes.NewReader(body)); err != nil {
		c.fail("%s (%s): %v", what, v, err)
		return false
	}
	fmt.Printf("valid %s: %s\n", v, what)
	return true
}

// blob reads the blob a descriptor names and checks its digest and size.
func (c *checker) blob(d ocispec.Descriptor) ([]byte, bool) {
	path := "blobs/" + strings.Replace(d.Digest.String(), ":", "/", 1)
	body, ok := c.files[path]
	if !ok {
		c.fail("%s: missing (%s)", d.Digest, d.MediaType)
		return nil, false
	}
	sum := sha256.Sum256(body)
	if d.Digest.Algorithm() != "sha256" || hex.EncodeToString(sum[:]) != d.Digest.Encoded() {
		c.fail("%s: content digest is sha256:%s", d.Digest, hex.EncodeToString(sum[:]))
		return nil, false
	}
	if int64(len(body)) != d.Size {
		c.fail("%s: %d bytes, the descriptor says %d", d.Digest, len(body), d.Size)
		return nil, false
	}
	return body, true
}

// descriptor follows an index's or manifest's descriptor down to its content.
func (c *checker) descriptor(d ocispec.Descriptor) {
	body, ok := c.blob(d)
	if !ok {
		return
	}
	what := d.Digest.String()
	if d.Platform != nil {
		what += " (" + d.Platform.OS + "/" + d.Platform.Architecture + ")"
	}
	switch d.MediaType {
	case ocispec.MediaTypeImageIndex:
		if !c.validate(what, schema.ValidatorMediaTypeImageIndex, body) {
			return
		}
		var idx ocispec.Index
		if err := json.Unmarshal(body, &idx); err != nil {
			c.fail("%s: %v", what, err)
			return
		}
		for _, m := range idx.Manifests {
			c.descriptor(m)
		}
	case ocispec.MediaTypeImageManifest:
		if !c.validate(what, schema.ValidatorMediaTypeManifest, body) {
			return
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(body, &m); err != nil {
			c.fail("%s: %v", what, err)
			return
		}
		if config, ok := c.blob(m.Config); ok && m.Config.MediaType == ocispec.MediaTypeImageConfig {
			c.validate(m.Config.Digest.String(), schema.ValidatorMediaTypeImageConfig, config)
			var cfg ocispec.Image
			if err := json.Unmarshal(config, &cfg); err == nil && len(cfg.RootFS.DiffIDs) != len(m.Layers) {
				c.fail("%s: %d layers, its config has %d diff_ids", what, len(m.Layers), len(cfg.RootFS.DiffIDs))
			}
		}
		for _, l := range m.Layers {
			if _, ok := c.blob(l); ok {
				fmt.Printf("present %s: %s (%d bytes)\n", l.MediaType, l.Digest, l.Size)
			}
		}
	default:
		c.fail("%s: media type %q is neither an OCI index nor an OCI image manifest", what, d.MediaType)
	}
}

func readArchive(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		files[strings.TrimPrefix(h.Name, "./")] = body
	}
}

func run(path string) error {
	files, err := readArchive(path)
	if err != nil {
		return err
	}
	c := &checker{files: files}
	if c.validate("oci-layout", schema.ValidatorMediaTypeLayoutHeader, files["oci-layout"]) {
		if c.validate("index.json", schema.ValidatorMediaTypeImageIndex, files["index.json"]) {
			var idx ocispec.Index
			if err := json.Unmarshal(files["index.json"], &idx); err != nil {
				return err
			}
			for _, m := range idx.Manifests {
				c.descriptor(m)
			}
		}
	}
	if len(c.failures) > 0 {
		return fmt.Errorf("%s fails the OCI image-spec:\n  %s", path, strings.Join(c.failures, "\n  "))
	}
	fmt.Printf("%s: valid OCI image layout\n", path)
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ocivalidate ARCHIVE.tar")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "ocivalidate:", err)
		os.Exit(1)
	}
}
