// Command scanner lists the packages syft's own catalogers find in one platform's image: the
// Debian package database (syft's dpkg-db-cataloger) and the binaries syft classifies by their
// contents (its binary-classifier-cataloger, which names Node's binary). It imports those two
// catalogers and syft's directory source only, not syft's CLI with every cataloger and every
// image provider, so its cold build is a fraction of syft's.
//
// The image's filesystem is flattened (layers applied, whiteouts honoured) by go-containerregistry
// into a temporary directory that syft then reads, as it reads a root filesystem.
//
// Usage: scanner [--platform linux/amd64] [--plain-http] SOURCE, where SOURCE is one of
// dir:PATH (a root filesystem), oci-dir:PATH (an OCI image layout), oci-archive:PATH (a tar of
// one) or registry:REFERENCE. It prints {"artifacts":[{"name","version","type"}]}, sorted.
package main

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/anchore/syft/syft/pkg"
	"github.com/anchore/syft/syft/pkg/cataloger/binary"
	"github.com/anchore/syft/syft/pkg/cataloger/debian"
	"github.com/anchore/syft/syft/source"
	"github.com/anchore/syft/syft/source/directorysource"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

type artifact struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Type    string `json:"type"`
}

func main() {
	platform := flag.String("platform", "linux/amd64", "the platform's image of an index (os/arch)")
	plainHTTP := flag.Bool("plain-http", false, "reach a registry: source over plain HTTP")
	flag.Parse()
	if flag.NArg() != 1 {
		fail(errors.New("usage: scanner [--platform os/arch] [--plain-http] dir:PATH|oci-dir:PATH|oci-archive:PATH|registry:REF"))
	}
	artifacts, err := scan(flag.Arg(0), *platform, *plainHTTP)
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(map[string][]artifact{"artifacts": artifacts}); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scanner:", err)
	os.Exit(1)
}

func scan(src, platform string, plainHTTP bool) ([]artifact, error) {
	kind, where, ok := strings.Cut(src, ":")
	if !ok {
		return nil, fmt.Errorf("source %q: want dir:, oci-dir:, oci-archive: or registry:", src)
	}
	if kind == "dir" {
		return catalog(where)
	}
	img, cleanup, err := image(kind, where, platform, plainHTTP)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "scanner-rootfs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	if err := flatten(img, root); err != nil {
		return nil, err
	}
	return catalog(root)
}

// image is the platform's image of the source; cleanup removes what reading it unpacked.
func image(kind, where, platform string, plainHTTP bool) (v1.Image, func(), error) {
	none := func() {}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, none, err
	}
	switch kind {
	case "registry":
		var opts []name.Option
		if plainHTTP {
			opts = append(opts, name.Insecure)
		}
		ref, err := name.ParseReference(where, opts...)
		if err != nil {
			return nil, none, err
		}
		img, err := remote.Image(ref, remote.WithPlatform(*p))
		return img, none, err
	case "oci-dir":
		img, err := fromLayout(where, *p)
		return img, none, err
	case "oci-archive":
		dir, err := os.MkdirTemp("", "scanner-layout-")
		if err != nil {
			return nil, none, err
		}
		cleanup := func() { os.RemoveAll(dir) }
		f, err := os.Open(where)
		if err != nil {
			return nil, cleanup, err
		}
		defer f.Close()
		if err := untar(f, dir); err != nil {
			return nil, cleanup, fmt.Errorf("%s: %w", where, err)
		}
		img, err := fromLayout(dir, *p)
		return img, cleanup, err
	}
	return nil, none, fmt.Errorf("source kind %q: want dir, oci-dir, oci-archive or registry", kind)
}

// fromLayout finds the platform's image in the layout's index (one level of nested index allowed).
func fromLayout(dir string, p v1.Platform) (v1.Image, error) {
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	for depth := 0; depth < 2; depth++ {
		manifest, err := index.IndexManifest()
		if err != nil {
			return nil, err
		}
		var nested v1.ImageIndex
		for _, d := range manifest.Manifests {
			if d.MediaType.IsIndex() && len(manifest.Manifests) == 1 {
				if nested, err = index.ImageIndex(d.Digest); err != nil {
					return nil, err
				}
				break
			}
			if d.Platform != nil && d.Platform.Satisfies(p) {
				return index.Image(d.Digest)
			}
		}
		if nested == nil {
			break
		}
		index = nested
	}
	return nil, fmt.Errorf("%s: no image for %s", dir, p.String())
}

// flatten writes the image's filesystem (its layers applied) under root.
func flatten(img v1.Image, root string) error {
	r := mutate.Extract(img)
	defer r.Close()
	return untar(r, root)
}

// untar writes a tar's directories, regular files, symbolic and hard links under root, refusing
// any path that leaves it; other entries (devices, FIFOs) are skipped.
func untar(r io.Reader, root string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path, err := inside(root, h.Name)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode)&0o777)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, path)
		case tar.TypeLink:
			var target string
			if target, err = inside(root, h.Linkname); err == nil {
				err = os.Link(target, path)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

func inside(root, name string) (string, error) {
	path := filepath.Join(root, filepath.Clean("/"+name))
	if path != root && !strings.HasPrefix(path, root+string(filepath.Separator)) {
		return "", fmt.Errorf("tar entry %q leaves the folder", name)
	}
	return path, nil
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// unknownErrors is the package of syft's CoordinateError: a file a cataloger looked at and could
// not attribute (the dpkg cataloger reading status.d/<package>.md5sums as a status file, say).
// syft's CLI reports these as the SBOM's "unknowns" and goes on; so does the scanner.
const unknownErrors = "github.com/anchore/syft/internal/unknown"

// splitUnknowns walks a cataloger's (joined) error: syft's unknowns, and the errors that fail the scan.
func splitUnknowns(err error) (unknown, failed []error) {
	if err == nil {
		return nil, nil
	}
	var nested []error
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		nested = e.Unwrap()
	case interface{ WrappedErrors() []error }:
		nested = e.WrappedErrors()
	default:
		if t := reflect.TypeOf(err); t.Kind() == reflect.Pointer && t.Elem().PkgPath() == unknownErrors {
			return []error{err}, nil
		}
		return nil, []error{err}
	}
	for _, n := range nested {
		u, f := splitUnknowns(n)
		unknown, failed = append(unknown, u...), append(failed, f...)
	}
	return unknown, failed
}

// catalog runs the two catalogers on the root filesystem at root.
func catalog(root string) ([]artifact, error) {
	src, err := directorysource.New(directorysource.Config{Path: root, Base: root})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	resolver, err := src.FileResolver(source.SquashedScope)
	if err != nil {
		return nil, err
	}
	catalogers := []pkg.Cataloger{
		debian.NewDBCataloger(),
		binary.NewClassifierCataloger(binary.DefaultClassifierCatalogerConfig()),
	}
	var out []artifact
	for _, c := range catalogers {
		found, _, err := c.Catalog(context.Background(), resolver)
		unknown, failed := splitUnknowns(err)
		for _, u := range unknown {
			fmt.Fprintf(os.Stderr, "scanner: %s: unknown: %v\n", c.Name(), u)
		}
		if len(failed) > 0 {
			return nil, fmt.Errorf("%s: %w", c.Name(), errors.Join(failed...))
		}
		for _, p := range found {
			out = append(out, artifact{Name: p.Name, Version: p.Version, Type: string(p.Type)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Version < b.Version
	})
	return out, nil
}
