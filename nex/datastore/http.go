package datastore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// The HTTP side of DataStore: object bodies never travel over RMC. The
// server hands out an upload URL with form fields (PreparePostObject,
// PrepareUpdateObject: a multipart/form-data POST, as to an S3 bucket's
// presigned POST, the body in the part named "file") and a download URL
// (PrepareGetObject: a signed GET that expires). With Blobs on object
// storage (a Presigner) the URLs are the bucket's own and this endpoint
// takes no uploads (staging.go). Paths:
//
//	POST /upload/TOKEN           once, before the upload expires, exactly the declared size
//	GET  /objects/ID/VERSION?expires=UNIX&signature=HEX
const (
	uploadPath   = "/upload/"
	downloadPath = "/objects/"
	// maxFormOverhead bounds what an upload may carry besides the body
	// (part headers, form fields).
	maxFormOverhead = 64 << 10
)

// HTTPHandler returns the handler of the body endpoint, to serve at BaseURL.
func (s *Server) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+uploadPath+"{token}", s.serveUpload)
	mux.HandleFunc("GET "+downloadPath+"{id}/{version}", s.serveDownload)
	mux.HandleFunc("GET "+notificationsPath+"{pid}", s.serveNotifications) // notifications.go
	return mux
}

func (s *Server) httpError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if s.Logger != nil {
		s.Logger.LogAttrs(r.Context(), slog.LevelDebug, "nex datastore http: refused", slog.String("path", r.URL.Path),
			slog.Int("status", code), slog.String("reason", msg))
	}
	// A refused request's body is not read: the connection closes instead
	// of draining it.
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// Defaults of the upload caps.
const (
	DefaultMaxUploads       = 64
	DefaultMaxPlayerUploads = 2
)

func (s *Server) maxUploads() int {
	if s.MaxUploads > 0 {
		return s.MaxUploads
	}
	return DefaultMaxUploads
}

func (s *Server) maxPlayerUploads() int {
	if s.MaxPlayerUploads > 0 {
		return s.MaxPlayerUploads
	}
	return DefaultMaxPlayerUploads
}

// uploadSlots counts the uploads being received, in all and per player.
type uploadSlots struct {
	mu     sync.Mutex
	total  int
	player map[types.PID]int
}

// take claims a slot for one of owner's uploads, or says why there is none.
func (u *uploadSlots) take(owner types.PID, maxTotal, maxPlayer int) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.total >= maxTotal:
		return fmt.Sprintf("too many uploads at once (%d)", maxTotal)
	case u.player[owner] >= maxPlayer:
		return fmt.Sprintf("too many uploads at once for this player (%d)", maxPlayer)
	}
	if u.player == nil {
		u.player = map[types.PID]int{}
	}
	u.total++
	u.player[owner]++
	return ""
}

func (u *uploadSlots) give(owner types.PID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.total--
	if u.player[owner]--; u.player[owner] <= 0 {
		delete(u.player, owner)
	}
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := s.init(); err != nil {
		s.httpError(w, r, http.StatusInternalServerError, "datastore not configured")
		return
	}
	if _, ok := s.presigner(); ok {
		s.httpError(w, r, http.StatusNotFound, "uploads go to the bucket's presigned POST URL")
		return
	}
	token := r.PathValue("token")
	u, err := s.Store.Upload(ctx, token)
	switch {
	case errors.Is(err, ErrNotFound):
		s.httpError(w, r, http.StatusNotFound, "no such upload")
		return
	case err != nil:
		s.httpError(w, r, http.StatusInternalServerError, "upload lookup failed")
		return
	case u.Used:
		s.httpError(w, r, http.StatusConflict, "upload URL already used")
		return
	case !s.now().Before(u.Expires):
		s.httpError(w, r, http.StatusForbidden, "upload URL expired")
		return
	}
	if _, busy := s.inflight.LoadOrStore(token, struct{}{}); busy {
		s.httpError(w, r, http.StatusConflict, "upload URL in use")
		return
	}
	defer s.inflight.Delete(token)
	o, err := s.Store.Object(ctx, u.DataID)
	if err != nil {
		s.httpError(w, r, http.StatusNotFound, "no such upload")
		return
	}
	if why := s.uploads.take(o.Owner, s.maxUploads(), s.maxPlayerUploads()); why != "" {
		w.Header().Set("Retry-After", "10")
		s.httpError(w, r, http.StatusTooManyRequests, why)
		return
	}
	defer s.uploads.give(o.Owner)

	r.Body = http.MaxBytesReader(w, r.Body, int64(u.Size)+maxFormOverhead)
	mr, err := r.MultipartReader()
	if err != nil {
		s.httpError(w, r, http.StatusBadRequest, "want multipart/form-data: "+err.Error())
		return
	}
	key := blobKey(u.DataID, u.Version)
	stored := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.httpError(w, r, http.StatusBadRequest, "bad multipart body: "+err.Error())
			s.dropBlob(ctx, key, stored)
			return
		}
		name := part.FormName()
		if name == "file" {
			if stored {
				s.httpError(w, r, http.StatusBadRequest, "more than one file part")
				s.dropBlob(ctx, key, true)
				return
			}
			if err := s.Blobs.Put(ctx, key, part, int64(u.Size)); err != nil {
				code := http.StatusInternalServerError
				var mbe *http.MaxBytesError
				switch {
				case errors.As(err, &mbe):
					code = http.StatusRequestEntityTooLarge
				case errors.Is(err, ErrTooLarge):
					code = http.StatusRequestEntityTooLarge
				case errors.Is(err, ErrTooShort):
					code = http.StatusBadRequest
				}
				s.httpError(w, r, code, err.Error())
				return
			}
			stored = true
			continue
		}
		// A form field: the ones handed out must come back unchanged.
		v, err := io.ReadAll(io.LimitReader(part, 1024))
		if err != nil {
			s.httpError(w, r, http.StatusBadRequest, "bad form field: "+err.Error())
			s.dropBlob(ctx, key, stored)
			return
		}
		if name == "key" && string(v) != key {
			s.httpError(w, r, http.StatusForbidden, "form field key does not match the upload")
			s.dropBlob(ctx, key, stored)
			return
		}
	}
	if !stored {
		s.httpError(w, r, http.StatusBadRequest, `no "file" part`)
		return
	}
	if err := s.Store.FinishUpload(ctx, token, s.now()); err != nil {
		s.dropBlob(ctx, key, true)
		switch {
		case errors.Is(err, ErrUploadUsed):
			s.httpError(w, r, http.StatusConflict, "upload URL already used")
		case errors.Is(err, ErrUploadExpired):
			s.httpError(w, r, http.StatusForbidden, "upload URL expired")
		default:
			s.httpError(w, r, http.StatusInternalServerError, "upload not recorded")
		}
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) dropBlob(ctx context.Context, key string, stored bool) {
	if stored {
		_ = s.Blobs.Delete(context.WithoutCancel(ctx), key)
	}
}

func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	if err := s.init(); err != nil {
		s.httpError(w, r, http.StatusInternalServerError, "datastore not configured")
		return
	}
	id, err1 := strconv.ParseUint(r.PathValue("id"), 10, 64)
	ver, err2 := strconv.ParseUint(r.PathValue("version"), 10, 32)
	exp, err3 := strconv.ParseInt(r.URL.Query().Get("expires"), 10, 64)
	sig, err4 := hex.DecodeString(r.URL.Query().Get("signature"))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		s.httpError(w, r, http.StatusBadRequest, "bad download URL")
		return
	}
	if !hmac.Equal(sig, s.sign(id, uint32(ver), exp)) {
		s.httpError(w, r, http.StatusForbidden, "bad signature")
		return
	}
	if s.now().Unix() >= exp {
		s.httpError(w, r, http.StatusForbidden, "download URL expired")
		return
	}
	body, size, err := s.Blobs.Open(r.Context(), blobKey(id, uint32(ver)))
	if errors.Is(err, ErrNotFound) {
		s.httpError(w, r, http.StatusNotFound, "no such object")
		return
	}
	if err != nil {
		s.httpError(w, r, http.StatusInternalServerError, "open failed")
		return
	}
	defer body.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	_, _ = io.Copy(w, body)
}

func blobKey(dataID uint64, version uint32) string { return fmt.Sprintf("%d/%d", dataID, version) }

func (s *Server) sign(id uint64, version uint32, expires int64) []byte {
	m := hmac.New(sha256.New, s.secret[:])
	fmt.Fprintf(m, "%d/%d/%d", id, version, expires)
	return m.Sum(nil)
}

// downloadURL is the signed URL of a body, valid for DownloadTTL.
func (s *Server) downloadURL(id uint64, version uint32) string {
	exp := s.now().Add(s.downloadTTL()).Unix()
	return fmt.Sprintf("%s%s%d/%d?expires=%d&signature=%s", strings.TrimSuffix(s.BaseURL, "/"), downloadPath, id, version,
		exp, hex.EncodeToString(s.sign(id, version, exp)))
}

func (s *Server) uploadURL(token string) string {
	return strings.TrimSuffix(s.BaseURL, "/") + uploadPath + token
}

func (s *Server) downloadTTL() time.Duration {
	if s.DownloadTTL > 0 {
		return s.DownloadTTL
	}
	return DefaultURLTTL
}

func (s *Server) uploadTTL() time.Duration {
	if s.UploadTTL > 0 {
		return s.UploadTTL
	}
	return DefaultURLTTL
}
