package datastore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Bodies on object storage (a Presigner). A client uploads with a presigned
// POST to a staging key of its own upload,
//
//	uploads/DATAID/VERSION/TOKEN
//
// (TOKEN random, one per PreparePostObject or PrepareUpdateObject). The
// storage enforces the policy: the key, exactly the declared size, the
// expiry. Complete finds the staged body, checks its size with a HEAD,
// marks the upload used and copies the body, inside the object's
// transaction, to the readable key DATAID/VERSION that presigned GETs
// name. A policy stays valid until it expires however often it is used, so
// a POST after Complete lands in a staging key nothing reads any more: it
// cannot change a readable body.
const (
	stagingDir = "uploads/"
	// maxStaged bounds the staged uploads Complete looks at for one
	// version (one per prepare call).
	maxStaged = 100
)

func stagingPrefix(id uint64) string { return fmt.Sprintf("%s%d/", stagingDir, id) }

func stagingVersionPrefix(id uint64, ver uint32) string {
	return fmt.Sprintf("%s%d/%d/", stagingDir, id, ver)
}

func stagingKey(id uint64, ver uint32, token string) string {
	return stagingVersionPrefix(id, ver) + token
}

// bodyURL is where a client downloads a body: a presigned GET on object
// storage, the server's signed URL otherwise.
func (s *Server) bodyURL(ctx context.Context, id uint64, ver uint32) (string, error) {
	if p, ok := s.presigner(); ok {
		return p.PresignGet(ctx, blobKey(id, ver), s.downloadTTL())
	}
	return s.downloadURL(id, ver), nil
}

// findStaged returns the newest unused upload of an object's version whose
// body is staged, with the body's description. A staged body of the wrong
// size (storage that does not enforce content-length-range) is
// DataStore::OperationNotAllowed; no body at all is ErrNotFound.
func (k *call) findStaged(p Presigner, id uint64, ver uint32) (Upload, BlobInfo, error) {
	prefix := stagingVersionPrefix(id, ver)
	list, err := p.List(k.ctx, prefix, maxStaged)
	if err != nil {
		return Upload{}, BlobInfo{}, err
	}
	var best Upload
	var bestInfo BlobInfo
	var wrong error
	for _, b := range list {
		token := strings.TrimPrefix(b.Key, prefix)
		u, err := k.s.Store.Upload(k.ctx, token)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return Upload{}, BlobInfo{}, err
		}
		if u.DataID != id || u.Version != ver || u.Used {
			continue
		}
		// The listing's size, then a HEAD's: the storage's word on what it holds now.
		if b.Size == int64(u.Size) {
			b, err = p.Stat(k.ctx, b.Key)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return Upload{}, BlobInfo{}, err
			}
		}
		if b.Size != int64(u.Size) {
			wrong = fmt.Errorf("%w: object %d version %d: the body uploaded has %d bytes, %d were declared",
				types.DataStoreOperationNotAllowed, id, ver, b.Size, u.Size)
			continue
		}
		if best.Token == "" || b.Modified.After(bestInfo.Modified) {
			best, bestInfo = u, b
		}
	}
	switch {
	case best.Token != "":
		return best, bestInfo, nil
	case wrong != nil:
		return Upload{}, BlobInfo{}, wrong
	}
	return Upload{}, BlobInfo{}, fmt.Errorf("%w: staged body of object %d version %d", ErrNotFound, id, ver)
}

// claimStaged finds the staged body of an object's version and marks its
// upload used, so no other Complete claims it. A body not there is
// DataStore::OperationNotAllowed.
func (k *call) claimStaged(p Presigner, id uint64, ver uint32) (Upload, BlobInfo, error) {
	u, b, err := k.findStaged(p, id, ver)
	if errors.Is(err, ErrNotFound) {
		return u, b, fmt.Errorf("%w: object %d version %d: its body was never uploaded", types.DataStoreOperationNotAllowed, id, ver)
	}
	if err != nil {
		return u, b, err
	}
	// The storage refused the body after the policy's expiry, so a body it
	// holds arrived in time, whatever the two clocks say: the upload is
	// recorded used as of when the storage took it, or just before its
	// expiry.
	at := b.Modified
	if at.IsZero() || !at.Before(u.Expires) {
		at = u.Expires.Add(-time.Nanosecond)
	}
	switch err := k.s.Store.FinishUpload(k.ctx, u.Token, at); {
	case errors.Is(err, ErrUploadUsed):
		return u, b, fmt.Errorf("%w: object %d version %d: its upload was completed already", types.DataStoreOperationNotAllowed, id, ver)
	case err != nil:
		return u, b, err
	}
	return u, b, nil
}

// deleteStaged deletes the staged bodies under prefix, a page at a time
// (at most maxStaged pages: what is left then is for a lifecycle rule).
func (s *Server) deleteStaged(ctx context.Context, p Presigner, prefix string) {
	for range maxStaged {
		list, err := p.List(ctx, prefix, maxStaged)
		if err != nil || len(list) == 0 {
			return
		}
		for _, b := range list {
			if err := p.Delete(ctx, b.Key); err != nil {
				return
			}
		}
		if len(list) < maxStaged {
			return
		}
	}
}
