// Package tkcd serves Team Kirby Clash Deluxe's ServiceItem (protocol 119,
// ServiceItem_TKCD): the game's shop, which stood in front of the Nintendo
// eShop. The methods its Pretendo Network server answers (ListServiceItem,
// GetSupportId) and the ones that follow from them (GetBalance,
// GetLawMessage, GetServiceItemRight, GetPurchaseHistory) are answered here
// from the operator's configuration (the catalogue: the eShop that sold the
// items is closed) and a Store (each player's support id). Nothing can be
// bought or granted (PurchaseServiceItem, AcquireServiceItemByAccount and
// the other methods that would change a player's rights are not served), so
// a player's rights and purchase history are empty.
//
// The protocol is asynchronous: a ...Request method answers a request id, the
// server then sends the caller a notification event of type 115000 ("service
// item request completed", nintendo-wiki "Notification Events": category
// 115) naming that id, and the ...Response method of the same name, called
// with the id, answers the result once. Wire formats are generated from
// nex/desc/defs/serviceitem_tkcd.nexd (nex/protocols/serviceitemtkcd).
package tkcd

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/notifications"
	si "github.com/gamewire/gamewire/nex/protocols/serviceitemtkcd"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// GameName is the title's name in the games table (nex/games): serve --game
// with it serves this package.
const GameName = "Team Kirby Clash Deluxe"

// Methods are the ServiceItem_TKCD methods the Server answers.
var Methods = []uint32{
	si.ServiceItemTKCDMethodListServiceItemRequest, si.ServiceItemTKCDMethodListServiceItemResponse,
	si.ServiceItemTKCDMethodGetBalanceRequest, si.ServiceItemTKCDMethodGetBalanceResponse,
	si.ServiceItemTKCDMethodGetServiceItemRightRequest, si.ServiceItemTKCDMethodGetServiceItemRightResponse,
	si.ServiceItemTKCDMethodGetPurchaseHistoryRequest, si.ServiceItemTKCDMethodGetPurchaseHistoryResponse,
	si.ServiceItemTKCDMethodGetSupportId,
	si.ServiceItemTKCDMethodGetLawMessageRequest, si.ServiceItemTKCDMethodGetLawMessageResponse,
}

// ServiceItem result codes this package answers (nex/types has them all).
const (
	ResultUnknown         = types.ServiceItemUnknown
	ResultInvalidArgument = types.ServiceItemInvalidArgument
)

// NotificationRequestCompleted is the notification type of a completed
// request (category 115, no subtype); Param1 is the request id.
const NotificationRequestCompleted uint32 = 115000

// Limits.
const (
	// MaxPageSize bounds the items of one ListServiceItem page, whatever
	// size the client asks for.
	MaxPageSize = 100
	// MaxPendingPerPlayer bounds a player's requests whose result was not
	// collected: a new request drops the oldest.
	MaxPendingPerPlayer = 16
	// MaxPending bounds the uncollected requests of the whole server: beyond
	// it, new requests fail with ServiceItem::Unknown until some are
	// collected or expire.
	MaxPending = 1 << 16
	// PendingTTL is how long an uncollected result is kept.
	PendingTTL = 10 * time.Minute
)

// Config is what an operator sets per server.
type Config struct {
	// Catalog is the shop's catalogue, in the order ListServiceItem pages
	// through it. Empty by default: the eShop that sold the game's items is
	// closed, so there is nothing to sell unless an operator offers items.
	// In serve --game-config's JSON the items' keys are the Go field names
	// ({"ItemCode": "...", "RegularPrice": {"FormattedAmount": ...}, ...}).
	Catalog []si.ServiceItemListItem `json:"catalog,omitempty"`
	// BalanceAvailable says whether the shop shows a balance (Balance); a
	// client that asks for none gets none.
	BalanceAvailable bool `json:"balance_available,omitempty"`
	// Balance is the balance shown (GetBalance, ListServiceItem).
	Balance si.ServiceItemAmount `json:"balance"`
	// LawMessages are the messages GetLawMessage shows before a purchase,
	// by language ("" for any language without its own); none by default
	// (is_message_required false).
	LawMessages map[string]string `json:"law_messages,omitempty"`
}

// Server answers ServiceItem_TKCD's Methods. Register it with Register.
type Server struct {
	si.UnimplementedServiceItemTKCD
	// Store keeps the support ids; required.
	Store Store
	// Hub sends the completion notifications (nex.Server.Hub()); without it
	// no notification is sent and a client never collects its results.
	Hub *notifications.Hub
	// Config: see Config.
	Config Config
	// Logger receives failed notifications.
	Logger *slog.Logger
	// Now returns the time; default time.Now.
	Now func() time.Time

	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]*pending
	byPID   map[types.PID][]uint32 // oldest first
}

// pending is a request whose result was not collected.
type pending struct {
	pid     types.PID
	collect uint32 // the ...Response method that collects it
	result  any
	at      time.Time
}

var _ si.ServiceItemTKCDHandler = (*Server)(nil)

// Register registers s for the Methods on mux; the protocol's other methods
// are left to whatever else handles 119 (Core::NotImplemented by default).
func Register(mux *rmc.Mux, s *Server) error {
	if s.Store == nil {
		return errors.New("tkcd: Server.Store is required")
	}
	si.RegisterServiceItemTKCDMethods(mux, s, Methods...)
	return nil
}

// ParamError implements rmc.ParamErrorer: parameters that do not decode are
// ServiceItem::InvalidArgument.
func (s *Server) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %w", ResultInvalidArgument, err)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// caller returns the authenticated caller.
func caller(c *rmc.Call) (types.PID, error) {
	if c.Peer == nil || c.Peer.PID == 0 {
		return 0, fmt.Errorf("%w: ServiceItem needs an authenticated caller", types.CoreAccessDenied)
	}
	return c.Peer.PID, nil
}

// begin records result as the answer to a new request of the caller,
// collected by the method collect, and arranges for the completion
// notification to follow the call's response. It returns the request id.
func (s *Server) begin(ctx context.Context, c *rmc.Call, collect uint32, result any) (uint32, error) {
	pid, err := caller(c)
	if err != nil {
		return 0, err
	}
	now := s.now()
	s.mu.Lock()
	if s.pending == nil {
		s.pending = make(map[uint32]*pending)
		s.byPID = make(map[types.PID][]uint32)
	}
	s.expireLocked(pid, now)
	if len(s.pending) >= MaxPending {
		for p := range s.byPID {
			s.expireLocked(p, now)
		}
	}
	if len(s.pending) >= MaxPending {
		s.mu.Unlock()
		return 0, fmt.Errorf("%w: %d uncollected ServiceItem requests on the server", ResultUnknown, len(s.pending))
	}
	if ids := s.byPID[pid]; len(ids) >= MaxPendingPerPlayer {
		delete(s.pending, ids[0])
		s.byPID[pid] = ids[1:]
	}
	var id uint32
	for {
		s.nextID++
		if s.nextID == 0 {
			s.nextID = 1
		}
		if _, used := s.pending[s.nextID]; !used {
			id = s.nextID
			break
		}
	}
	s.pending[id] = &pending{pid: pid, collect: collect, result: result, at: now}
	s.byPID[pid] = append(s.byPID[pid], id)
	s.mu.Unlock()
	if s.Hub != nil {
		hub, log := s.Hub, s.Logger
		c.AfterResponse(func() {
			// Param2 is 1 as Pretendo Network's server sends it; its meaning
			// is not public.
			ev := notifications.Event{Source: pid, Type: NotificationRequestCompleted, Param1: uint64(id), Param2: 1}
			if err := hub.Notify(ctx, pid, ev); err != nil && log != nil {
				log.LogAttrs(ctx, slog.LevelDebug, "tkcd: completion notification not sent",
					slog.Uint64("pid", uint64(pid)), slog.Uint64("request", uint64(id)), slog.String("error", err.Error()))
			}
		})
	}
	return id, nil
}

// expireLocked drops pid's results older than PendingTTL.
func (s *Server) expireLocked(pid types.PID, now time.Time) {
	ids := s.byPID[pid]
	n := 0
	for n < len(ids) && now.Sub(s.pending[ids[n]].at) > PendingTTL {
		delete(s.pending, ids[n])
		n++
	}
	if n == len(ids) {
		delete(s.byPID, pid)
	} else {
		s.byPID[pid] = ids[n:]
	}
}

// collect returns, once, the result of the caller's request id, which the
// method collect must be the one to collect.
func (s *Server) collect(c *rmc.Call, id uint32, collect uint32) (any, error) {
	pid, err := caller(c)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[id]
	switch {
	case !ok || p.pid != pid || s.now().Sub(p.at) > PendingTTL:
		return nil, fmt.Errorf("%w: no pending request %d of player %d", ResultInvalidArgument, id, pid)
	case p.collect != collect:
		return nil, fmt.Errorf("%w: request %d is collected by method %d, not %d", ResultInvalidArgument, id, p.collect, collect)
	}
	delete(s.pending, id)
	ids := s.byPID[pid]
	for i, x := range ids {
		if x == id {
			ids = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(s.byPID, pid)
	} else {
		s.byPID[pid] = ids
	}
	return p.result, nil
}

// Pending returns how many results are waiting to be collected.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// ok is the eShop part of a successful result.
func (s *Server) ok() si.ServiceItemEShopResponse {
	return si.ServiceItemEShopResponse{HTTPStatus: 200, CorrelationID: correlationID()}
}

// correlationID returns a new random (version 4) UUID, as the eShop named
// each of its responses.
func correlationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ListServiceItemRequest implements si.ServiceItemTKCDHandler: a page of the
// catalogue (from offset, at most size items, at most MaxPageSize).
func (s *Server) ListServiceItemRequest(ctx context.Context, c *rmc.Call, p si.ServiceItemListServiceItemParam) (uint32, error) {
	items := s.Config.Catalog
	total := len(items)
	page := []si.ServiceItemListItem{}
	if off := int64(p.Offset); off < int64(total) {
		n := min(int64(p.Size), MaxPageSize, int64(total)-off)
		page = append(page, items[off:off+n]...)
	}
	cat := si.ServiceItemCatalog{TotalSize: uint32(total), Offset: p.Offset, ListItems: page}
	if p.IsBalanceAvailable && s.Config.BalanceAvailable {
		cat.IsBalanceAvailable, cat.Balance = true, s.Config.Balance
	}
	res := si.ServiceItemListServiceItemResponse{ServiceItemEShopResponse: s.ok(), NullableCatalog: []si.ServiceItemCatalog{cat}}
	return s.begin(ctx, c, si.ServiceItemTKCDMethodListServiceItemResponse, res)
}

// ListServiceItemResponse implements si.ServiceItemTKCDHandler.
func (s *Server) ListServiceItemResponse(ctx context.Context, c *rmc.Call, id uint32) (si.ServiceItemListServiceItemResponse, error) {
	r, err := s.collect(c, id, si.ServiceItemTKCDMethodListServiceItemResponse)
	if err != nil {
		return si.ServiceItemListServiceItemResponse{}, err
	}
	return r.(si.ServiceItemListServiceItemResponse), nil
}

// GetBalanceRequest implements si.ServiceItemTKCDHandler: the configured
// balance, none when the shop shows none.
func (s *Server) GetBalanceRequest(ctx context.Context, c *rmc.Call, p si.ServiceItemGetBalanceParam) (uint32, error) {
	res := si.ServiceItemGetBalanceResponse{ServiceItemEShopResponse: s.ok(), NullableBalance: []si.ServiceItemAmount{}}
	if s.Config.BalanceAvailable {
		res.NullableBalance = append(res.NullableBalance, s.Config.Balance)
	}
	return s.begin(ctx, c, si.ServiceItemTKCDMethodGetBalanceResponse, res)
}

// GetBalanceResponse implements si.ServiceItemTKCDHandler.
func (s *Server) GetBalanceResponse(ctx context.Context, c *rmc.Call, id uint32) (si.ServiceItemGetBalanceResponse, error) {
	r, err := s.collect(c, id, si.ServiceItemTKCDMethodGetBalanceResponse)
	if err != nil {
		return si.ServiceItemGetBalanceResponse{}, err
	}
	return r.(si.ServiceItemGetBalanceResponse), nil
}

// GetLawMessageRequest implements si.ServiceItemTKCDHandler: the configured
// message of the language (else of ""), not required when there is none.
func (s *Server) GetLawMessageRequest(ctx context.Context, c *rmc.Call, p si.ServiceItemGetLawMessageParam) (uint32, error) {
	msg, ok := s.Config.LawMessages[p.Language]
	if !ok {
		msg, ok = s.Config.LawMessages[""]
	}
	res := si.ServiceItemGetLawMessageResponse{ServiceItemEShopResponse: s.ok(),
		NullableLawMessage: []si.ServiceItemLawMessage{{IsMessageRequired: ok && msg != "", LawMessage: msg}}}
	return s.begin(ctx, c, si.ServiceItemTKCDMethodGetLawMessageResponse, res)
}

// GetLawMessageResponse implements si.ServiceItemTKCDHandler.
func (s *Server) GetLawMessageResponse(ctx context.Context, c *rmc.Call, id uint32) (si.ServiceItemGetLawMessageResponse, error) {
	r, err := s.collect(c, id, si.ServiceItemTKCDMethodGetLawMessageResponse)
	if err != nil {
		return si.ServiceItemGetLawMessageResponse{}, err
	}
	return r.(si.ServiceItemGetLawMessageResponse), nil
}

// GetServiceItemRightRequest implements si.ServiceItemTKCDHandler: the
// caller's rights, with its support id. The server has no way to buy or
// grant a right (PurchaseServiceItem and AcquireServiceItemByAccount are not
// served), so a player holds none.
func (s *Server) GetServiceItemRightRequest(ctx context.Context, c *rmc.Call, p si.ServiceItemGetServiceItemRightParam, withoutRightBinary bool) (uint32, error) {
	id, err := s.supportID(ctx, c)
	if err != nil {
		return 0, err
	}
	res := si.ServiceItemGetServiceItemRightResponse{ServiceItemEShopResponse: s.ok(), NullableRightInfos: []si.ServiceItemRightInfos{{
		SupportID: id, ConsumptionRightInfos: []si.ServiceItemRightConsumptionInfo{},
		AdditionalTimeRightInfos: []si.ServiceItemRightTimeInfo{}, PermanentRightInfos: []si.ServiceItemRightTimeInfo{}}}}
	return s.begin(ctx, c, si.ServiceItemTKCDMethodGetServiceItemRightResponse, res)
}

// GetServiceItemRightResponse implements si.ServiceItemTKCDHandler.
func (s *Server) GetServiceItemRightResponse(ctx context.Context, c *rmc.Call, id uint32) (si.ServiceItemGetServiceItemRightResponse, error) {
	r, err := s.collect(c, id, si.ServiceItemTKCDMethodGetServiceItemRightResponse)
	if err != nil {
		return si.ServiceItemGetServiceItemRightResponse{}, err
	}
	return r.(si.ServiceItemGetServiceItemRightResponse), nil
}

// GetPurchaseHistoryRequest implements si.ServiceItemTKCDHandler: the
// caller's purchases from offset. Nothing can be bought here (the eShop is
// closed; PurchaseServiceItem is not served), so the history is empty.
func (s *Server) GetPurchaseHistoryRequest(ctx context.Context, c *rmc.Call, p si.ServiceItemGetPurchaseHistoryParam) (uint32, error) {
	res := si.ServiceItemGetPurchaseHistoryResponse{ServiceItemEShopResponse: s.ok(),
		NullablePurchaseHistory: []si.ServiceItemPurchaseHistory{{Offset: p.Offset, Transactions: []si.ServiceItemTransaction{}}}}
	return s.begin(ctx, c, si.ServiceItemTKCDMethodGetPurchaseHistoryResponse, res)
}

// GetPurchaseHistoryResponse implements si.ServiceItemTKCDHandler.
func (s *Server) GetPurchaseHistoryResponse(ctx context.Context, c *rmc.Call, id uint32) (si.ServiceItemGetPurchaseHistoryResponse, error) {
	r, err := s.collect(c, id, si.ServiceItemTKCDMethodGetPurchaseHistoryResponse)
	if err != nil {
		return si.ServiceItemGetPurchaseHistoryResponse{}, err
	}
	return r.(si.ServiceItemGetPurchaseHistoryResponse), nil
}

// SupportIDDigits is the length of a support id: decimal digits, random,
// one per player, kept in the Store.
const SupportIDDigits = 16

// GetSupportId implements si.ServiceItemTKCDHandler: the caller's support id,
// created on the first call and the same on every later one.
func (s *Server) GetSupportId(ctx context.Context, c *rmc.Call, p si.ServiceItemGetSupportIdParam) (string, error) {
	return s.supportID(ctx, c)
}

// supportID returns the caller's support id, drawing and storing one the
// first time.
func (s *Server) supportID(ctx context.Context, c *rmc.Call) (string, error) {
	pid, err := caller(c)
	if err != nil {
		return "", err
	}
	for range 3 {
		cand, err := newSupportID()
		if err != nil {
			return "", fmt.Errorf("%w: %w", ResultUnknown, err)
		}
		id, err := s.Store.SupportID(ctx, pid, cand)
		if errors.Is(err, ErrSupportIDTaken) {
			continue // another player has that number: draw again
		}
		if err != nil {
			return "", err // logged, answered Core::Exception
		}
		return id, nil
	}
	return "", fmt.Errorf("%w: no free support id in 3 draws", ResultUnknown)
}

var supportIDRange = new(big.Int).Exp(big.NewInt(10), big.NewInt(SupportIDDigits), nil)

func newSupportID() (string, error) {
	n, err := rand.Int(rand.Reader, supportIDRange)
	if err != nil {
		return "", fmt.Errorf("tkcd: support id: %w", err)
	}
	return fmt.Sprintf("%0*d", SupportIDDigits, n), nil
}
