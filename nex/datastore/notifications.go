package datastore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Notifications of new arrivals. An object flagged
// DataFlagUseNotificationOnPost (or ...OnUpdate) whose access permission
// names recipients gives each recipient a notification when it is posted
// (updated); GetNewArrivedNotifications(V1) lists a user's notifications
// after the last one seen. GetNotificationUrl hands out a signed URL the
// client polls over HTTP to learn whether there is anything new without an
// RMC call:
//
//	GET /notifications/PID?expires=UNIX&signature=HEX
//
// answers "ID,PID,UNIX": the newest notification's id and time (0,PID,0
// with none), the layout PretendoNetwork's nex-protocols-common-go writes
// to its notification files (judgement call: the page does not give one).
const notificationsPath = "/notifications/"

// notifyArrival records the notifications object o's post or update owes,
// when o carries flag: to the recipients of a recipients permission, to the
// owner's friends of a friends permission (when Server.Friends knows them). A
// failure is logged: the post itself stands.
func (k *call) notifyArrival(o Object, flag uint32) {
	if o.Flag&flag == 0 {
		return
	}
	var named []types.PID
	switch {
	case o.Permission.Permission == PermissionRecipients:
		named = o.Permission.RecipientIDs
	case o.Permission.Permission == PermissionFriends && k.s.Friends != nil:
		fs, err := k.s.Friends.FriendsOf(k.ctx, o.Owner)
		if err != nil {
			if k.s.Logger != nil {
				k.s.Logger.LogAttrs(k.ctx, slog.LevelWarn, "nex datastore: friends not read for notifications",
					slog.Uint64("dataId", o.DataID), slog.String("error", err.Error()))
			}
			return
		}
		named = fs
	default:
		return
	}
	var to []types.PID
	for _, p := range named {
		if p != o.Owner && !slices.Contains(to, p) {
			to = append(to, p)
		}
	}
	if len(to) == 0 {
		return
	}
	if err := k.s.Store.AddNotifications(k.ctx, o.DataID, to, k.now, MaxKeptNotifications); err != nil && k.s.Logger != nil {
		k.s.Logger.LogAttrs(k.ctx, slog.LevelWarn, "nex datastore: notifications not recorded",
			slog.Uint64("dataId", o.DataID), slog.String("error", err.Error()))
	}
}

// NotificationURLInfo is the DataStoreReqGetNotificationUrlInfo structure:
// the client fetches URL+Key+Query.
type NotificationURLInfo struct {
	URL        string
	Key        string
	Query      string
	RootCACert []byte
}

func (s *Server) notificationSignature(pid types.PID, expires int64) string {
	mac := hmac.New(sha256.New, s.secret[:])
	fmt.Fprintf(mac, "notifications %d %d", pid, expires)
	return hex.EncodeToString(mac.Sum(nil))
}

// notificationURL answers where the caller polls for its notifications; the
// previous URL the client sends is not needed (a fresh one is signed).
func (k *call) notificationURL() NotificationURLInfo {
	exp := k.now.Add(NotificationURLTTL).Unix()
	return NotificationURLInfo{URL: strings.TrimSuffix(k.s.BaseURL, "/") + "/", Key: notificationsPath[1:] + strconv.FormatUint(uint64(k.me), 10),
		Query: "?" + url.Values{"expires": {strconv.FormatInt(exp, 10)}, "signature": {k.s.notificationSignature(k.me, exp)}}.Encode(),
	}
}

// serveNotifications answers a GetNotificationUrl URL.
func (s *Server) serveNotifications(w http.ResponseWriter, r *http.Request) {
	if err := s.init(); err != nil {
		s.httpError(w, r, http.StatusInternalServerError, "datastore not configured")
		return
	}
	pid, err := strconv.ParseUint(r.PathValue("pid"), 10, 64)
	exp, err2 := strconv.ParseInt(r.URL.Query().Get("expires"), 10, 64)
	sig, err3 := hex.DecodeString(r.URL.Query().Get("signature"))
	if err != nil || err2 != nil || err3 != nil {
		s.httpError(w, r, http.StatusBadRequest, "bad notification URL")
		return
	}
	want, _ := hex.DecodeString(s.notificationSignature(types.PID(pid), exp))
	if !hmac.Equal(sig, want) {
		s.httpError(w, r, http.StatusForbidden, "bad signature")
		return
	}
	if !s.now().Before(time.Unix(exp, 0)) {
		s.httpError(w, r, http.StatusForbidden, "notification URL expired")
		return
	}
	n, err := s.Store.LatestNotification(r.Context(), types.PID(pid))
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.httpError(w, r, http.StatusInternalServerError, "notification lookup failed")
		return
	}
	at := int64(0)
	if err == nil {
		at = n.Created.Unix()
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "%d,%d,%d", n.ID, pid, at)
}

// newArrivedNotifications lists the caller's notifications after last, at
// most limit, and whether more follow.
func (k *call) newArrivedNotifications(last uint64, limit uint16, v1 bool) ([]Notification, bool, error) {
	if limit == 0 {
		return nil, false, fmt.Errorf("%w: limit 0", types.DataStoreInvalidArgument)
	}
	want := min(int(limit), MaxNotifications)
	ns, err := k.s.Store.Notifications(k.ctx, k.me, last, want+1)
	if err != nil {
		return nil, false, err
	}
	more := len(ns) > want
	ns = ns[:min(len(ns), want)]
	if v1 {
		// DataStoreNotificationV1 has a 32-bit data id: objects past it are
		// left out rather than named wrongly.
		ns = slices.DeleteFunc(ns, func(n Notification) bool { return n.DataID > 0xFFFFFFFF })
	}
	return ns, more, nil
}
