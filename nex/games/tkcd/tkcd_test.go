package tkcd_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/games/internal/gametest"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	si "github.com/gamewire/gamewire/nex/protocols/serviceitemtkcd"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// catalog is an operator's catalogue of three items.
func catalog() []si.ServiceItemListItem {
	var items []si.ServiceItemListItem
	for i, code := range []string{"APPLE10", "APPLE50", "APPLE100"} {
		items = append(items, si.ServiceItemListItem{ItemCode: code,
			RegularPrice: si.ServiceItemAmount{FormattedAmount: "0 pts", Currency: "PTS", RawValue: "0"},
			Limitation:   si.ServiceItemLimitation{LimitationType: 1, LimitationValue: uint32(10 * (i + 1))},
			Attributes:   []si.ServiceItemAttribute{{Name: "name", Value: code}}})
	}
	return items
}

var balance = si.ServiceItemAmount{FormattedAmount: "0 pts", Currency: "PTS", RawValue: "0"}

var uuid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestServiceItemOverPRUDP serves the shop on a real secure server (3DS
// PRUDP, NEX 3.10.1): a catalogue page is asked for, the completion
// notification names the request id the call answered, and the response
// method collects the page once; support ids are per player and stable.
func TestServiceItemOverPRUDP(t *testing.T) {
	ctx := context.Background()
	cfg := tkcd.Config{Catalog: catalog(), BalanceAvailable: true, Balance: balance, LawMessages: map[string]string{"en": "Terms of sale"}}
	srv := gametest.Start(t, prudp.Config{Dialect: prudp.NEXV0, AccessKey: "e0c85605"}, 31001, func(srv *nex.Server, store *accounts.Store) error {
		return tkcd.Register(srv.Mux, &tkcd.Server{Store: store.TKCD(), Hub: srv.Hub(), Config: cfg})
	})
	p, q := srv.Login(t, 2000), srv.Login(t, 2001)
	pc, qc := si.NewServiceItemTKCDClient(p.Session.RMC), si.NewServiceItemTKCDClient(q.Session.RMC)

	id, err := pc.ListServiceItemRequest(ctx, si.ServiceItemListServiceItemParam{Language: "en", Offset: 1, Size: 5, IsBalanceAvailable: true, UniqueID: 7, Platform: 1})
	if err != nil {
		t.Fatal(err)
	}
	ev := p.Next(t, tkcd.NotificationRequestCompleted)
	if ev.Param1 != uint64(id) || ev.Source != 2000 || ev.Param2 != 1 {
		t.Fatalf("notification %+v for request %d", ev, id)
	}
	if _, err := qc.ListServiceItemResponse(ctx, id); !errors.Is(err, types.ServiceItemInvalidArgument) {
		t.Fatalf("another player collects request %d: %v, want ServiceItem::InvalidArgument", id, err)
	}
	if _, err := pc.GetBalanceResponse(ctx, id); !errors.Is(err, types.ServiceItemInvalidArgument) {
		t.Fatalf("request %d collected by GetBalanceResponse: %v, want ServiceItem::InvalidArgument", id, err)
	}
	res, err := pc.ListServiceItemResponse(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.HTTPStatus != 200 || res.ErrorCode != 0 || !uuid.MatchString(res.CorrelationID) || len(res.NullableCatalog) != 1 {
		t.Fatalf("response %+v", res)
	}
	cat := res.NullableCatalog[0]
	if cat.TotalSize != 3 || cat.Offset != 1 || len(cat.ListItems) != 2 || cat.ListItems[0].ItemCode != "APPLE50" ||
		cat.ListItems[1].Limitation.LimitationValue != 30 || cat.ListItems[1].Attributes[0].Value != "APPLE100" ||
		!cat.IsBalanceAvailable || cat.Balance != balance {
		t.Fatalf("catalogue %+v", cat)
	}
	if _, err := pc.ListServiceItemResponse(ctx, id); !errors.Is(err, types.ServiceItemInvalidArgument) {
		t.Fatalf("collected twice: %v, want ServiceItem::InvalidArgument", err)
	}

	lid, err := qc.GetLawMessageRequest(ctx, si.ServiceItemGetLawMessageParam{Language: "en", Platform: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ev := q.Next(t, tkcd.NotificationRequestCompleted); ev.Param1 != uint64(lid) || ev.Source != 2001 {
		t.Fatalf("notification %+v for request %d", ev, lid)
	}
	law, err := qc.GetLawMessageResponse(ctx, lid)
	if err != nil || len(law.NullableLawMessage) != 1 || law.NullableLawMessage[0] != (si.ServiceItemLawMessage{IsMessageRequired: true, LawMessage: "Terms of sale"}) {
		t.Fatalf("law message %+v %v", law, err)
	}

	a, err := pc.GetSupportId(ctx, si.ServiceItemGetSupportIdParam{UniqueID: 7, Platform: 1})
	if err != nil || len(a) != tkcd.SupportIDDigits {
		t.Fatalf("support id %q %v", a, err)
	}
	if again, err := pc.GetSupportId(ctx, si.ServiceItemGetSupportIdParam{}); err != nil || again != a {
		t.Fatalf("support id again %q %v, want %q", again, err, a)
	}
	if b, err := qc.GetSupportId(ctx, si.ServiceItemGetSupportIdParam{}); err != nil || b == a {
		t.Fatalf("another player's support id %q %v (first %q)", b, err, a)
	}
	// The methods the package does not answer stay Core::NotImplemented.
	if _, err := pc.PurchaseServiceItemRequest(ctx, si.ServiceItemPurchaseServiceItemParam{ItemCode: "APPLE10"}); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("PurchaseServiceItemRequest: %v, want Core::NotImplemented", err)
	}
}

type fixture struct {
	mux   *rmc.Mux
	srv   *tkcd.Server
	store *accounts.Store
	now   time.Time
}

func newFixture(t *testing.T, cfg tkcd.Config) *fixture {
	t.Helper()
	st, _, err := accounts.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{mux: rmc.NewMux(), store: st, now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	f.srv = &tkcd.Server{Store: st.TKCD(), Config: cfg, Now: func() time.Time { return f.now }}
	if err := tkcd.Register(f.mux, f.srv); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) client(pid types.PID) si.ServiceItemTKCDClient {
	return si.NewServiceItemTKCDClient(&rmc.InMemory{Handler: f.mux, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true, Version: 31001}}})
}

// TestCatalogPages: pages follow offset and size, bounded by MaxPageSize;
// an offset past the end is an empty page; no balance is shown unless both
// the client asks and the operator shows one.
func TestCatalogPages(t *testing.T) {
	ctx := context.Background()
	items := make([]si.ServiceItemListItem, tkcd.MaxPageSize+20)
	for i := range items {
		items[i].ItemCode = string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	f := newFixture(t, tkcd.Config{Catalog: items})
	c := f.client(2000)
	for _, k := range []struct {
		offset, size uint32
		want         []si.ServiceItemListItem
	}{
		{0, 3, items[:3]}, {118, 5, items[118:]}, {0, 0xFFFFFFFF, items[:tkcd.MaxPageSize]}, {120, 5, nil}, {0xFFFFFFFF, 0xFFFFFFFF, nil}, {5, 0, nil},
	} {
		id, err := c.ListServiceItemRequest(ctx, si.ServiceItemListServiceItemParam{Offset: k.offset, Size: k.size, IsBalanceAvailable: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.ListServiceItemResponse(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		cat := res.NullableCatalog[0]
		if cat.TotalSize != uint32(len(items)) || cat.Offset != k.offset || len(cat.ListItems) != len(k.want) || cat.IsBalanceAvailable {
			t.Fatalf("offset %d size %d: total %d offset %d, %d items, balance %v; want %d items", k.offset, k.size,
				cat.TotalSize, cat.Offset, len(cat.ListItems), cat.IsBalanceAvailable, len(k.want))
		}
		for i := range k.want {
			if cat.ListItems[i].ItemCode != k.want[i].ItemCode {
				t.Fatalf("offset %d size %d: item %d is %q, want %q", k.offset, k.size, i, cat.ListItems[i].ItemCode, k.want[i].ItemCode)
			}
		}
	}
	// The default configuration: nothing on sale, no balance.
	d := newFixture(t, tkcd.Config{}).client(2000)
	id, err := d.GetBalanceRequest(ctx, si.ServiceItemGetBalanceParam{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := d.GetBalanceResponse(ctx, id); err != nil || len(res.NullableBalance) != 0 || res.HTTPStatus != 200 {
		t.Fatalf("GetBalance with no balance configured: %+v %v", res, err)
	}
	if id, err = d.GetLawMessageRequest(ctx, si.ServiceItemGetLawMessageParam{Language: "fr"}); err != nil {
		t.Fatal(err)
	}
	if res, err := d.GetLawMessageResponse(ctx, id); err != nil || len(res.NullableLawMessage) != 1 || res.NullableLawMessage[0].IsMessageRequired {
		t.Fatalf("GetLawMessage with no message configured: %+v %v", res, err)
	}
}

// TestPendingBounds: a player's uncollected results are bounded (the oldest
// dropped) and expire; request ids are never reused while pending; an
// unauthenticated caller is refused.
func TestPendingBounds(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, tkcd.Config{Catalog: catalog()})
	c := f.client(2000)
	var ids []uint32
	for range tkcd.MaxPendingPerPlayer + 2 {
		id, err := c.ListServiceItemRequest(ctx, si.ServiceItemListServiceItemParam{Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids, id) {
			t.Fatalf("request id %d twice", id)
		}
		ids = append(ids, id)
	}
	if n := f.srv.Pending(); n != tkcd.MaxPendingPerPlayer {
		t.Fatalf("%d pending, want %d", n, tkcd.MaxPendingPerPlayer)
	}
	for _, id := range ids[:2] {
		if _, err := c.ListServiceItemResponse(ctx, id); !errors.Is(err, types.ServiceItemInvalidArgument) {
			t.Fatalf("dropped request %d: %v", id, err)
		}
	}
	if _, err := c.ListServiceItemResponse(ctx, ids[2]); err != nil {
		t.Fatalf("oldest kept request: %v", err)
	}
	f.now = f.now.Add(tkcd.PendingTTL + time.Second)
	if _, err := c.ListServiceItemResponse(ctx, ids[3]); !errors.Is(err, types.ServiceItemInvalidArgument) {
		t.Fatalf("expired request: %v", err)
	}
	if _, err := c.ListServiceItemRequest(ctx, si.ServiceItemListServiceItemParam{}); err != nil {
		t.Fatal(err)
	}
	if n := f.srv.Pending(); n != 1 {
		t.Fatalf("%d pending after expiry, want 1", n)
	}
	if _, err := f.client(0).GetSupportId(ctx, si.ServiceItemGetSupportIdParam{}); !errors.Is(err, types.CoreAccessDenied) {
		t.Fatalf("unauthenticated: %v", err)
	}
	// Parameters that do not decode are ServiceItem::InvalidArgument.
	if _, err := f.client(2000).C.Call(ctx, si.ServiceItemTKCDProtocolID, si.ServiceItemTKCDMethodListServiceItemRequest, []byte{1, 2}); !errors.Is(err, types.ServiceItemInvalidArgument) {
		t.Fatalf("truncated parameters: %v", err)
	}
}

// TestSupportIDsPersist: a player's support id survives the server (a new
// Server on the same store answers the same).
func TestSupportIDsPersist(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, tkcd.Config{})
	a, err := f.client(2000).GetSupportId(ctx, si.ServiceItemGetSupportIdParam{})
	if err != nil {
		t.Fatal(err)
	}
	mux := rmc.NewMux()
	if err := tkcd.Register(mux, &tkcd.Server{Store: f.store.TKCD()}); err != nil {
		t.Fatal(err)
	}
	c := si.NewServiceItemTKCDClient(&rmc.InMemory{Handler: mux, Peer: &rmc.Peer{PID: 2000, Settings: types.Settings{StructureHeader: true}}})
	if b, err := c.GetSupportId(ctx, si.ServiceItemGetSupportIdParam{}); err != nil || b != a {
		t.Fatalf("after restart %q %v, want %q", b, err, a)
	}
}

// TestRightsAndHistory: a player's rights carry its support id (the one
// GetSupportId answers) and, nothing being sold or granted here, no right;
// the purchase history is empty from the offset asked.
func TestRightsAndHistory(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, tkcd.Config{Catalog: catalog()})
	c := f.client(2000)
	id, err := c.GetServiceItemRightRequest(ctx, si.ServiceItemGetServiceItemRightParam{ReferenceID: "APPLE10", Platform: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetServiceItemRightResponse(ctx, id)
	if err != nil || len(res.NullableRightInfos) != 1 {
		t.Fatalf("rights: %+v %v", res, err)
	}
	r := res.NullableRightInfos[0]
	support, err := c.GetSupportId(ctx, si.ServiceItemGetSupportIdParam{})
	if err != nil || r.SupportID != support || len(r.ConsumptionRightInfos)+len(r.AdditionalTimeRightInfos)+len(r.PermanentRightInfos) != 0 || r.AlreadyPurchasedInitialOnlyItem {
		t.Fatalf("rights %+v, support id %q %v", r, support, err)
	}
	if id, err = c.GetPurchaseHistoryRequest(ctx, si.ServiceItemGetPurchaseHistoryParam{Offset: 5, Size: 10}); err != nil {
		t.Fatal(err)
	}
	h, err := c.GetPurchaseHistoryResponse(ctx, id)
	if err != nil || len(h.NullablePurchaseHistory) != 1 || h.NullablePurchaseHistory[0].TotalSize != 0 || h.NullablePurchaseHistory[0].Offset != 5 ||
		len(h.NullablePurchaseHistory[0].Transactions) != 0 || h.HTTPStatus != 200 {
		t.Fatalf("history %+v %v", h, err)
	}
}
