package tkcd_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/nex/games/tkcd"
	si "github.com/gamewire/gamewire/nex/protocols/serviceitemtkcd"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// memStore is tkcd.Store in memory, for the fuzz target.
type memStore struct {
	mu  sync.Mutex
	ids map[types.PID]string
}

func (m *memStore) SupportID(ctx context.Context, pid types.PID, candidate string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.ids[pid]; ok {
		return id, nil
	}
	m.ids[pid] = candidate
	return candidate, nil
}

// FuzzServiceItemCalls sends arbitrary parameters to every ServiceItem_TKCD
// method: each call is answered (a result or a ServiceItem or Core error),
// never a panic. Seeds: the parameters a NEX 3.10 client sends, as the
// generated client encodes them (no public capture of the game exists).
func FuzzServiceItemCalls(f *testing.F) {
	settings := types.Settings{StructureHeader: true, Version: 31001}
	seed := func(method uint32, a interface{ Append(*types.Writer) }) {
		w := types.NewWriter(nil, settings)
		a.Append(&w)
		b, err := w.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(method, b)
	}
	seed(si.ServiceItemTKCDMethodListServiceItemRequest, &si.ServiceItemTKCDListServiceItemRequestRequest{
		ListServiceItemParam: si.ServiceItemListServiceItemParam{Language: "en", Offset: 0, Size: 10, IsBalanceAvailable: true, UniqueID: 0x12345, Platform: 1}})
	seed(si.ServiceItemTKCDMethodListServiceItemResponse, &si.ServiceItemTKCDListServiceItemResponseRequest{RequestID: 1})
	seed(si.ServiceItemTKCDMethodGetBalanceRequest, &si.ServiceItemTKCDGetBalanceRequestRequest{
		GetBalanceParam: si.ServiceItemGetBalanceParam{Language: "ja", UniqueID: 0x12345, Platform: 1}})
	seed(si.ServiceItemTKCDMethodGetSupportId, &si.ServiceItemTKCDGetSupportIdRequest{GetSupportIDParam: si.ServiceItemGetSupportIdParam{UniqueID: 0x12345, Platform: 1}})
	seed(si.ServiceItemTKCDMethodGetLawMessageRequest, &si.ServiceItemTKCDGetLawMessageRequestRequest{
		GetLawMessageParam: si.ServiceItemGetLawMessageParam{Language: "en", UniqueID: 0x12345, Platform: 1}})
	seed(si.ServiceItemTKCDMethodGetServiceItemRightRequest, &si.ServiceItemTKCDGetServiceItemRightRequestRequest{
		GetServiceItemRightParam: si.ServiceItemGetServiceItemRightParam{ReferenceID: "APPLE10", DeviceID: "0", UniqueID: 0x12345, Platform: 1}, WithoutRightBinary: true})
	seed(si.ServiceItemTKCDMethodGetPurchaseHistoryRequest, &si.ServiceItemTKCDGetPurchaseHistoryRequestRequest{
		GetPurchaseHistoryParam: si.ServiceItemGetPurchaseHistoryParam{Language: "en", Size: 10, UniqueID: 0x12345, Platform: 1}})
	mux := rmc.NewMux()
	if err := tkcd.Register(mux, &tkcd.Server{Store: &memStore{ids: map[types.PID]string{}}, Config: tkcd.Config{Catalog: catalog(), BalanceAvailable: true}}); err != nil {
		f.Fatal(err)
	}
	peer := &rmc.Peer{PID: 2000, Settings: settings}
	f.Fuzz(func(t *testing.T, method uint32, params []byte) {
		req, err := (&rmc.Request{Protocol: si.ServiceItemTKCDProtocolID, CallID: 9, Method: method % 32, Params: params}).Append(nil)
		if err != nil {
			t.Skip()
		}
		out, err := rmc.Dispatch(context.Background(), mux, peer, req, nil, nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		resp, _, err := rmc.ParseResponse(out)
		if err != nil || resp.CallID != 9 {
			t.Fatalf("answer %x: %+v %v", out, resp, err)
		}
		if resp.IsError() && !strings.HasPrefix(resp.Result.Name(), "ServiceItem::") && !strings.HasPrefix(resp.Result.Name(), "Core::") {
			t.Fatalf("method %d answered %v", method%32, resp.Result)
		}
	})
}
