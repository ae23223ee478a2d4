package datastore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DirBlobs keeps bodies as files under a directory: key "12/1" is the file
// Dir/12/1. Put writes a temporary file in Dir and renames it into place
// only once exactly the declared size arrived, so a refused or broken upload
// leaves nothing behind.
type DirBlobs struct {
	Dir string
}

var _ Blobs = DirBlobs{}

func (d DirBlobs) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") || strings.ContainsRune(key, '\\') {
		return "", fmt.Errorf("datastore: bad body key %q", key)
	}
	return filepath.Join(d.Dir, filepath.FromSlash(key)), nil
}

// Put implements Blobs.
func (d DirBlobs) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("datastore: body directory: %w", err)
	}
	f, err := os.CreateTemp(d.Dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("datastore: body file: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// One byte more than declared tells an oversized body from an exact one.
	n, err := io.Copy(f, io.LimitReader(ctxReader{ctx, r}, size+1))
	if err != nil {
		return fmt.Errorf("datastore: receive body: %w", err)
	}
	if n != size {
		if n > size {
			return fmt.Errorf("%w: more than the %d bytes declared", ErrTooLarge, size)
		}
		return fmt.Errorf("%w: %d bytes of the %d declared", ErrTooShort, n, size)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("datastore: store body: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("datastore: store body: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("datastore: store body: %w", err)
	}
	ok = true
	return nil
}

// Open implements Blobs.
func (d DirBlobs) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w: body %s", ErrNotFound, key)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("datastore: open body: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("datastore: open body: %w", err)
	}
	return f, st.Size(), nil
}

// Delete implements Blobs.
func (d DirBlobs) Delete(ctx context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("datastore: delete body: %w", err)
	}
	return nil
}

// ctxReader stops reading once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
