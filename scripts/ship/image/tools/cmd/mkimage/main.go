// mkimage writes a one-layer container image, from a JSON spec on stdin (the files of the layer,
// the image config, its platform, and optionally its creation time and manifest annotations), as
// a docker-archive tar (what `ctr images import` and `docker load` read) or, with "format": "oci",
// an OCI image layout packed in a tar (an OCI archive, as skopeo's oci-archive: and
// `ctr images import` read). With "images" (one entry per platform) and "format": "oci" it writes
// one image per platform under an OCI image index, the multi-platform image a registry serves.
// The same spec always gives the same digests and the same archive bytes: entries keep the
// spec's order, owners are numeric, every timestamp is the spec's "created" (the Unix epoch when
// unset), and layers are gzip'd at the best compression level by this (pinned) Go's compressor.
//
// The layer tar is written with Go's archive/tar; manifests, configs, digests and the image
// layout are go-containerregistry's, so no image format is packed by hand. The OCI layout's
// folder is packed into the archive in lexical order.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type entry struct {
	// Path inside the image, without a leading slash.
	Path string `json:"path"`
	// "dir", "file" or "symlink".
	Type string `json:"type"`
	// For a file: the host file to copy, or Content when Source is empty.
	Source  string `json:"source,omitempty"`
	Content string `json:"content,omitempty"`
	// For a symlink.
	Target string `json:"target,omitempty"`
	Mode   int64  `json:"mode"`
	UID    int    `json:"uid"`
	GID    int    `json:"gid"`
}

// platformImage is one image: its layer's entries, its config and its platform.
type platformImage struct {
	Entries []entry   `json:"entries"`
	Config  v1.Config `json:"config"`
	// GOARCH names ("amd64", "arm64"); this machine's when empty.
	Architecture string `json:"architecture,omitempty"`
	Variant      string `json:"variant,omitempty"`
}

type spec struct {
	Output string `json:"output"`
	Tag    string `json:"tag"`
	platformImage
	// Set: an OCI image index of these images (format "oci" only); the top-level entries are unused.
	Images []platformImage `json:"images,omitempty"`
	// "docker" (the default) or "oci".
	Format string `json:"format,omitempty"`
	// RFC 3339; the image's created time and every timestamp in it. The Unix epoch when empty.
	Created string `json:"created,omitempty"`
	// Annotations of the image manifest (OCI's org.opencontainers.image.* keys).
	Annotations map[string]string `json:"annotations,omitempty"`
}

var epoch = time.Unix(0, 0).UTC()

func createdTime(s spec) (time.Time, error) {
	if s.Created == "" {
		return epoch, nil
	}
	t, err := time.Parse(time.RFC3339, s.Created)
	if err != nil {
		return time.Time{}, fmt.Errorf("created: %w", err)
	}
	return t.UTC(), nil
}

func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Path, Mode: e.Mode, Uid: e.UID, Gid: e.GID, ModTime: mtime, Format: tar.FormatPAX}
		var body []byte
		switch e.Type {
		case "dir":
			h.Typeflag = tar.TypeDir
		case "symlink":
			h.Typeflag = tar.TypeSymlink
			h.Linkname = e.Target
		case "file":
			h.Typeflag = tar.TypeReg
			body = []byte(e.Content)
			if e.Source != "" {
				b, err := os.ReadFile(e.Source)
				if err != nil {
					return nil, err
				}
				body = b
			}
			h.Size = int64(len(body))
		default:
			return nil, fmt.Errorf("%s: unknown entry type %q", e.Path, e.Type)
		}
		if err := w.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Path, err)
		}
		if _, err := w.Write(body); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Path, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func build(s spec, p platformImage) (v1.Image, error) {
	created, err := createdTime(s)
	if err != nil {
		return nil, err
	}
	data, err := layerTar(p.Entries, created)
	if err != nil {
		return nil, err
	}
	// An OCI archive holds OCI media types throughout; a docker archive, Docker's.
	base, layerOpts := empty.Image, []tarball.LayerOption{tarball.WithCompressionLevel(gzip.BestCompression)}
	if s.Format == "oci" {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		layerOpts = append(layerOpts, tarball.WithMediaType(types.OCILayer))
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, layerOpts...)
	if err != nil {
		return nil, err
	}
	arch := p.Architecture
	if arch == "" {
		arch = runtime.GOARCH
	}
	// rootfs.type is "layers", the only value the image-spec allows; diff_ids are filled by Append.
	cfg := &v1.ConfigFile{OS: "linux", Architecture: arch, Variant: p.Variant, Config: p.Config, RootFS: v1.RootFS{Type: "layers"}}
	img, err := mutate.ConfigFile(base, cfg)
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "echoperator mkimage"}})
	if err != nil {
		return nil, err
	}
	img, err = mutate.CreatedAt(img, v1.Time{Time: created})
	if err != nil || len(s.Annotations) == 0 {
		return img, err
	}
	return mutate.Annotations(img, s.Annotations).(v1.Image), nil
}

// buildIndex makes one image per platform, under an OCI image index carrying the annotations.
func buildIndex(s spec) (v1.ImageIndex, error) {
	var idx v1.ImageIndex = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range s.Images {
		img, err := build(s, p)
		if err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}},
		})
	}
	if len(s.Annotations) == 0 {
		return idx, nil
	}
	return mutate.Annotations(idx, s.Annotations).(v1.ImageIndex), nil
}

// writeOCIArchive writes an image or an index as an OCI image layout in a tar. The layout's
// index.json names it as containerd (io.containerd.image.name: the full reference) and the OCI
// spec (ref.name: the tag) do.
func writeOCIArchive(output string, tag name.Tag, add func(layout.Path, ...layout.Option) error, mtime time.Time) error {
	dir, err := os.MkdirTemp(filepath.Dir(output), ".mkimage-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	names := map[string]string{"io.containerd.image.name": tag.Name(), "org.opencontainers.image.ref.name": tag.TagStr()}
	if err := add(path, layout.WithAnnotations(names)); err != nil {
		return err
	}
	f, err := os.Create(output)
	if err != nil {
		return err
	}
	w := tar.NewWriter(f)
	// WalkDir visits in lexical order, so the archive's bytes depend on the layout's content alone.
	walk := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		h := &tar.Header{Name: rel, Mode: 0o644, ModTime: mtime, Format: tar.FormatPAX, Typeflag: tar.TypeReg}
		var body []byte
		if d.IsDir() {
			h.Name, h.Mode, h.Typeflag = rel+"/", 0o755, tar.TypeDir
		} else if body, err = os.ReadFile(p); err != nil {
			return err
		}
		h.Size = int64(len(body))
		if err := w.WriteHeader(h); err != nil {
			return err
		}
		_, err = w.Write(body)
		return err
	})
	if err := errors.Join(walk, w.Close(), f.Close()); err != nil {
		os.Remove(output)
		return err
	}
	return nil
}

func run() error {
	var s spec
	if err := json.NewDecoder(os.Stdin).Decode(&s); err != nil {
		return fmt.Errorf("reading the spec from stdin: %w", err)
	}
	tag, err := name.NewTag(s.Tag)
	if err != nil {
		return err
	}
	created, err := createdTime(s)
	if err != nil {
		return err
	}
	if len(s.Images) > 0 {
		if s.Format != "oci" {
			return fmt.Errorf("images: an index is written as an OCI archive only (format %q)", s.Format)
		}
		idx, err := buildIndex(s)
		if err != nil {
			return err
		}
		add := func(p layout.Path, o ...layout.Option) error { return p.AppendIndex(idx, o...) }
		if err := writeOCIArchive(s.Output, tag, add, created); err != nil {
			return err
		}
		return printIndex(tag, idx)
	}
	img, err := build(s, s.platformImage)
	if err != nil {
		return err
	}
	switch s.Format {
	case "", "docker":
		err = tarball.WriteToFile(s.Output, tag, img)
	case "oci":
		add := func(p layout.Path, o ...layout.Option) error { return p.AppendImage(img, o...) }
		err = writeOCIArchive(s.Output, tag, add, created)
	default:
		err = fmt.Errorf("format: %q is neither docker nor oci", s.Format)
	}
	if err != nil {
		return err
	}
	id, err := img.ConfigName()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]string{"tag": tag.String(), "id": id.String(), "digest": digest.String()})
}

// printIndex prints the index's digest and, per platform, its image's manifest digest.
func printIndex(tag name.Tag, idx v1.ImageIndex) error {
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	platforms := map[string]string{}
	for _, d := range m.Manifests {
		platforms[d.Platform.String()] = d.Digest.String()
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"tag": tag.String(), "digest": digest.String(), "platforms": platforms})
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}
