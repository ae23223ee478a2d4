// Package friendsgrpc tests gamewire's gRPC friends source
// (nex/friends/remote) against grpc-go's own server: the service a Pretendo
// friends server offers (PretendoNetwork/grpc-protobufs friends/: package
// friends, service Friends, GetUserFriendPIDs) described here by hand as a
// protobuf file descriptor, its messages encoded and decoded by protobuf-go
// (dynamicpb), and its API key checked in the X-API-Key metadata as
// PretendoNetwork/friends' interceptor does. No one here wrote the server's
// HTTP/2, gRPC framing or protobuf encoding: they judge the client.
package friendsgrpc

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/gamewire/gamewire/nex/friends/remote"
	"github.com/gamewire/gamewire/nex/types"
)

// friendsFile describes the two messages of GetUserFriendPIDs and the
// service, as get_user_friend_pids_rpc.proto and friends_service.proto
// declare them (proto3: the repeated uint32 is packed).
func friendsFile(t *testing.T) (req, resp protoreflect.MessageDescriptor) {
	t.Helper()
	u32 := descriptorpb.FieldDescriptorProto_TYPE_UINT32.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	fd := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("gamewire_test/friends.proto"),
		Package: proto.String("friends"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("GetUserFriendPIDsRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("pid"), JsonName: proto.String("pid"), Number: proto.Int32(1), Type: u32, Label: opt}}},
			{Name: proto.String("GetUserFriendPIDsResponse"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("pids"), JsonName: proto.String("pids"), Number: proto.Int32(1), Type: u32, Label: rep}}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Friends"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("GetUserFriendPIDs"), InputType: proto.String(".friends.GetUserFriendPIDsRequest"),
				OutputType: proto.String(".friends.GetUserFriendPIDsResponse")}}}},
	}
	f, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Services().Get(0).FullName(); got != "friends.Friends" {
		t.Fatalf("service %s", got)
	}
	return f.Messages().ByName("GetUserFriendPIDsRequest"), f.Messages().ByName("GetUserFriendPIDsResponse")
}

// friendsServer answers GetUserFriendPIDs from lists, recording the PIDs
// asked.
type friendsServer struct {
	req, resp protoreflect.MessageDescriptor
	lists     map[uint32][]uint32
	mu        sync.Mutex
	asked     []uint32
}

func (s *friendsServer) getUserFriendPIDs(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
	in := dynamicpb.NewMessage(s.req)
	if err := dec(in); err != nil {
		return nil, err
	}
	h := func(ctx context.Context, r any) (any, error) {
		pid := uint32(r.(*dynamicpb.Message).Get(s.req.Fields().ByName("pid")).Uint())
		s.mu.Lock()
		s.asked = append(s.asked, pid)
		s.mu.Unlock()
		out := dynamicpb.NewMessage(s.resp)
		list := out.Mutable(s.resp.Fields().ByName("pids")).List()
		for _, p := range s.lists[pid] {
			list.Append(protoreflect.ValueOfUint32(p))
		}
		return out, nil
	}
	if ic == nil {
		return h(ctx, in)
	}
	return ic(ctx, in, &grpc.UnaryServerInfo{FullMethod: remote.MethodGetUserFriendPIDs}, h)
}

// apiKey checks the X-API-Key metadata as PretendoNetwork/friends'
// interceptor does (a plain error: gRPC status Unknown).
func apiKey(key string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get("X-API-Key"); len(v) == 0 || v[0] != key {
			return nil, errors.New("Missing or invalid API key")
		}
		return h(ctx, req)
	}
}

func start(t *testing.T, s *friendsServer, key string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.UnaryInterceptor(apiKey(key)))
	g.RegisterService(&grpc.ServiceDesc{ServiceName: "friends.Friends", HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "GetUserFriendPIDs", Handler: s.getUserFriendPIDs}}}, nil)
	go g.Serve(ln)
	t.Cleanup(g.Stop)
	return ln.Addr().String()
}

func TestGRPCSourceAgainstGRPCGo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, resp := friendsFile(t)
	srv := &friendsServer{req: req, resp: resp, lists: map[uint32][]uint32{
		1000: {1001, 1002, 300000}, // 300000 takes a three-byte varint
		1001: {1000},
		7:    nil,
	}}
	addr := start(t, srv, "the-key")

	s, err := remote.Open("grpc://"+addr, remote.Options{Key: "the-key", TTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fs, err := s.FriendsOf(ctx, 1000)
	if err != nil || !slices.Equal(fs, []types.PID{1001, 1002, 300000}) {
		t.Fatalf("FriendsOf(1000): %v %v", fs, err)
	}
	if ok, err := s.AreFriends(ctx, 1001, 1000); !ok || err != nil {
		t.Fatalf("AreFriends(1001, 1000): %v %v", ok, err)
	}
	if ok, err := s.AreFriends(ctx, 1001, 1002); ok || err != nil {
		t.Fatalf("AreFriends(1001, 1002): %v %v", ok, err)
	}
	// An empty answer (proto3 sends no bytes for it) is no friends.
	if fs, err := s.FriendsOf(ctx, 7); err != nil || len(fs) != 0 {
		t.Fatalf("FriendsOf(7): %v %v", fs, err)
	}
	srv.mu.Lock()
	asked := slices.Clone(srv.asked)
	srv.mu.Unlock()
	if !slices.Equal(asked, []uint32{1000, 1001, 1001, 7}) {
		t.Fatalf("the server was asked for %v", asked)
	}

	// Many concurrent asks on one HTTP/2 connection.
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.AreFriends(ctx, 1000, types.PID(1001+i%2))
			if err == nil && !ok {
				err = errors.New("not friends")
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// grpc-go's refusal of a wrong key: its status and message, named, and
	// no friendship.
	bad, err := remote.Open("grpc://"+addr, remote.Options{Key: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	ok, err := bad.AreFriends(ctx, 1001, 1000)
	if ok || !errors.Is(err, remote.ErrSource) || !strings.Contains(err.Error(), "Missing or invalid API key") ||
		!strings.Contains(err.Error(), "status 2 (Unknown)") {
		t.Fatalf("a wrong key: %v %v", ok, err)
	}

	// A method grpc-go does not serve (a server of another service at the
	// address): Unimplemented.
	g2 := grpc.NewServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g2.Serve(ln)
	defer g2.Stop()
	other, err := remote.Open("grpc://"+ln.Addr().String(), remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.FriendsOf(ctx, 1000); !errors.Is(err, remote.ErrSource) || !strings.Contains(err.Error(), "Unimplemented") {
		t.Fatalf("an unknown service: %v", err)
	}
}
