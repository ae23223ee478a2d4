package datastore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Reclaiming abandoned state. A post prepared and never completed keeps a
// pending object, its upload row and perhaps a body (uploaded, never
// completed) or a staged upload on object storage; an update prepared and
// never completed keeps an upload row and perhaps a body or a staged
// upload; a process killed during an upload leaves a temporary file in the
// body directory. Sweep removes them all, once their upload window (and
// PendingGrace) is over. serve runs it every --sweep-interval.

// Defaults of the sweep.
const (
	// DefaultPendingGrace is how long after its upload URL expired a
	// pending post or an unused upload is kept: time for a Complete of a
	// body the storage took just before the expiry.
	DefaultPendingGrace = 5 * time.Minute
	// StaleTemp is the age (since last written) of a temporary upload file
	// in the body directory that belongs to no live upload: a live one is
	// written at the endpoint's minimum rate (internal/httplimit), and one
	// that stalls a minute loses its upload.
	StaleTemp = time.Minute
	// maxSweepStaged bounds the staged uploads one sweep looks at.
	maxSweepStaged = 1000
)

// SweepStats counts what a Sweep removed.
type SweepStats struct {
	Pending   int // pending posts (objects with their rows and bodies)
	Uploads   int // unused expired uploads of other objects
	Staged    int // staged uploads on object storage with no live upload
	TempFiles int // temporary upload files in the body directory
}

func (s *Server) pendingGrace() time.Duration {
	if s.PendingGrace > 0 {
		return s.PendingGrace
	}
	return DefaultPendingGrace
}

// Sweep removes abandoned state (see above): the rows the Store's Sweep
// deletes and the bodies and staged uploads that went with them, staged
// uploads whose upload is gone, used or long expired, and stale temporary
// files of DirBlobs. It stops at the first store failure; body deletions
// that fail are left for the next sweep.
func (s *Server) Sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	if err := s.init(); err != nil {
		return st, err
	}
	before := s.now().Add(-s.pendingGrace())
	p, staging := s.presigner()
	for {
		sw, err := s.Store.Sweep(ctx, before)
		if err != nil {
			return st, fmt.Errorf("datastore: sweep: %w", err)
		}
		for _, o := range sw.Objects {
			s.deleteBodies(ctx, o)
		}
		for _, u := range sw.Uploads {
			// An update's body, uploaded but never completed (a pending
			// post's went with its object above).
			_ = s.Blobs.Delete(ctx, blobKey(u.DataID, u.Version))
			if staging {
				_ = p.Delete(ctx, stagingKey(u.DataID, u.Version, u.Token))
			}
		}
		st.Pending += len(sw.Objects)
		st.Uploads += len(sw.Uploads)
		if len(sw.Objects) == 0 && len(sw.Uploads) == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
	}
	if staging {
		n, err := s.sweepStaged(ctx, p, before)
		st.Staged = n
		if err != nil {
			return st, err
		}
	}
	if d, ok := s.Blobs.(interface {
		RemoveStale(before time.Time) (int, error)
	}); ok {
		n, err := d.RemoveStale(time.Now().Add(-StaleTemp))
		st.TempFiles = n
		if err != nil {
			return st, err
		}
	}
	if s.Logger != nil && st != (SweepStats{}) {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex datastore: swept", slog.Int("pending", st.Pending), slog.Int("uploads", st.Uploads),
			slog.Int("staged", st.Staged), slog.Int("tempFiles", st.TempFiles))
	}
	return st, nil
}

// sweepStaged deletes staged uploads that arrived before `before` and whose
// upload is unknown (swept, or its object deleted), used (Complete copied
// it and died before deleting it) or expired before `before`.
func (s *Server) sweepStaged(ctx context.Context, p Presigner, before time.Time) (int, error) {
	list, err := p.List(ctx, stagingDir, maxSweepStaged)
	if err != nil {
		return 0, fmt.Errorf("datastore: sweep staged uploads: %w", err)
	}
	n := 0
	for _, b := range list {
		if b.Modified.IsZero() || !b.Modified.Before(before) {
			continue
		}
		token := b.Key[strings.LastIndexByte(b.Key, '/')+1:]
		u, err := s.Store.Upload(ctx, token)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return n, fmt.Errorf("datastore: sweep staged uploads: %w", err)
		case !u.Used && !u.Expires.Before(before):
			continue
		}
		if err := p.Delete(ctx, b.Key); err == nil {
			n++
		}
	}
	return n, nil
}

// tempPrefix starts the name of a temporary upload file in DirBlobs.Dir.
const tempPrefix = ".upload-"

// RemoveStale deletes the temporary upload files in d.Dir last written
// before `before`: those of uploads that failed without cleaning up (the
// process was killed) or stalled. It returns how many it deleted.
func (d DirBlobs) RemoveStale(before time.Time) (int, error) {
	entries, err := os.ReadDir(d.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("datastore: body directory: %w", err)
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(before) {
			continue
		}
		if err := os.Remove(filepath.Join(d.Dir, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}
