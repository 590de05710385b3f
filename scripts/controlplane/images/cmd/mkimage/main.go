// mkimage writes a one-layer container image as a docker-archive tar (what `ctr images import`
// and `docker load` read), from a JSON spec on stdin: the files of the layer and the image
// config. The same spec always gives the same image digest: entries keep the spec's order,
// every timestamp is the Unix epoch, owners are numeric.
//
// The layer tar is written with Go's archive/tar; manifests, configs, digests and the archive
// layout are go-containerregistry's, so no image format is packed by hand.
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
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

type spec struct {
	Output  string    `json:"output"`
	Tag     string    `json:"tag"`
	Entries []entry   `json:"entries"`
	Config  v1.Config `json:"config"`
}

var epoch = time.Unix(0, 0).UTC()

func layerTar(entries []entry) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Path, Mode: e.Mode, Uid: e.UID, Gid: e.GID, ModTime: epoch, Format: tar.FormatPAX}
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

func build(s spec) (v1.Image, error) {
	data, err := layerTar(s.Entries)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: runtime.GOARCH, Config: s.Config})
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "echoperator mkimage"}})
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: epoch})
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
	img, err := build(s)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(s.Output, tag, img); err != nil {
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

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}
