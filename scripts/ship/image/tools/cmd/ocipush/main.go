// ocipush pushes the image or image index of an OCI archive (an OCI image layout in a tar, as
// mkimage writes it: index.json names one image or one index) to a registry under a tag, every
// blob and manifest as it is, so the registry serves the archive's digest. Credentials are the
// Docker config's (~/.docker/config.json), as other registry clients read them. It prints
// {"reference": "REPO:TAG@DIGEST", "digest": "sha256:..."}.
//
//	ocipush [--plain-http] ARCHIVE.tar REPOSITORY:TAG
package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// unpack writes the archive's regular files and folders under dir, refusing any path outside it.
func unpack(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, dir+string(filepath.Separator)) {
			return fmt.Errorf("%s: %q is outside the layout", archive, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			var out *os.File
			if out, err = os.Create(path); err == nil {
				_, err = io.Copy(out, r)
				err = errors.Join(err, out.Close())
			}
		}
		if err != nil {
			return err
		}
	}
}

func run(archive, reference string, plainHTTP bool) error {
	var opts []name.Option
	if plainHTTP {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(reference, opts...)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ocipush-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := unpack(archive, dir); err != nil {
		return err
	}
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return err
	}
	m, err := root.IndexManifest()
	if err != nil {
		return err
	}
	if len(m.Manifests) != 1 {
		return fmt.Errorf("%s: index.json names %d images, want one image or one index", archive, len(m.Manifests))
	}
	top := m.Manifests[0]
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	if top.MediaType.IsIndex() {
		idx, err := root.ImageIndex(top.Digest)
		if err == nil {
			err = remote.WriteIndex(tag, idx, auth)
		}
		if err != nil {
			return err
		}
	} else {
		img, err := root.Image(top.Digest)
		if err == nil {
			err = remote.Write(tag, img, auth)
		}
		if err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]string{
		"reference": fmt.Sprintf("%s@%s", tag.Name(), top.Digest),
		"digest":    top.Digest.String(),
	})
}

func main() {
	plainHTTP := flag.Bool("plain-http", false, "talk to the registry over HTTP (a test registry on the loopback)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: ocipush [--plain-http] ARCHIVE.tar REPOSITORY:TAG")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *plainHTTP); err != nil {
		fmt.Fprintln(os.Stderr, "ocipush:", err)
		os.Exit(1)
	}
}
