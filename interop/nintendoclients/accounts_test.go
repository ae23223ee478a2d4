package nintendoclients

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/types"
)

// The token secret handed to serve in these tests, so that the test can make
// tokens the server would have made (expired ones, another player's).
var testSecret = bytes.Repeat([]byte{0x5a}, 32)

func testKeys(t *testing.T) *credentials.Keys {
	k, err := credentials.NewKeys(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// needAccountModules fails when the copy lacks nnas.py / nasc.py and their
// certificates (docs/interop.md).
func needAccountModules(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{"nintendo/nnas.py", "nintendo/nasc.py", "nintendo/files/cert/WIIU_COMMON_1_CERT.der", "nintendo/files/cert/ctr-common-1-cert.der"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%v: add NintendoClients' %s to the copy (docs/interop.md)", err, f)
		}
	}
}

// gamewireCLI runs the gamewire binary with stdin.
func gamewireCLI(t *testing.T, bin, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gamewire %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serveAccounts runs the gamewire serve binary on data with the account
// services, a required token policy, game server id gsid and testSecret, and
// returns its authentication server's port and the account services' port.
// It stops when the test ends.
func serveAccounts(t *testing.T, bin, data, gsid string) (port, web int) {
	t.Helper()
	port, web = freeServePorts(t), freeTCPPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	t.Cleanup(cancel) // after the graceful stop below (cleanups run last first)
	t.Cleanup(startServe(t, ctx, bin, "serve", "--data", data, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--account-listen", fmt.Sprintf("127.0.0.1:%d", web), "--game-server-id", gsid, "--token", "required",
		"--token-secret", hex.EncodeToString(testSecret)))
	waitTCP(t, web)
	waitTCP(t, port+2)
	return port, web
}

// runAccounts runs nc_accounts.py and returns its steps.
func runAccounts(t *testing.T, ctx context.Context, dir, python string, args ...string) steps {
	t.Helper()
	cmd := pyCmd(ctx, dir, python, "nc_accounts.py", append(args, "--timeout", "60")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("NintendoClients:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("nc_accounts.py: %v\nstderr:\n%s", err, stderr.String())
	}
	return steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
}

// wantRefused checks the "refused" steps: each name refused with its code.
func wantRefused(t *testing.T, out steps, want map[string]types.Result) {
	t.Helper()
	for name, code := range want {
		found := false
		for _, l := range out {
			if strings.HasPrefix(l, "STEP refused name="+name+" ") {
				found = true
				if !strings.Contains(l, fmt.Sprintf("code=0x%08X", uint32(code))) {
					t.Errorf("token %s: %s, want %v", name, l, code)
				}
			}
		}
		if !found {
			t.Errorf("no refusal of token %s", name)
		}
	}
}

func b64(k *credentials.Keys, tok credentials.Token) string {
	return base64.StdEncoding.EncodeToString(k.Seal(tok))
}

// TestNintendoClientsNNASLogin is issue 26's first done-when: NintendoClients'
// NNASClient (set_url to gamewire serve --account-listen, no TLS) logs in
// with an NNID made by gamewire accounts nnid add, reads the profile, maps
// NNID and PID both ways, reads the Miis and gets a nex_token for the game
// server id (an unknown one gets NNAS error 1021); NintendoClients' backend
// logs in to gamewire serve with that PID, NEX password and token (LoginEx,
// policy required). An expired token, another player's, one for another game
// and a forged one are refused with TokenExpired, PrincipalIdUnmatched and
// ValidationFailed.
func TestNintendoClientsNNASLogin(t *testing.T) {
	dir, python := env(t)
	needAccountModules(t, dir)
	bin := buildGamewire(t)
	data := filepath.Join(t.TempDir(), "gamewire")
	gamewireCLI(t, bin, "correct horse\n", "accounts", "nnid", "add", "WiiUPlayer", "--pid", "1750000001", "--mii-name", "Wii Mii", "--data", data, "--password-stdin")
	gamewireCLI(t, bin, "other-pass\n", "accounts", "nnid", "add", "OtherPlayer", "--pid", "1750000002", "--data", data, "--password-stdin")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	port, web := serveAccounts(t, bin, data, "1010EB00")

	k := testKeys(t)
	now := time.Now()
	good := credentials.Token{Type: credentials.TypeNEX, System: credentials.SystemWiiU, PID: 1750000001,
		Expires: now.Add(time.Hour), GameServerID: 0x1010EB00}
	expired, otherPlayer, otherGame := good, good, good
	expired.Expires = now.Add(-time.Minute)
	otherPlayer.PID = 1750000002
	otherGame.GameServerID = 0x1010EA00
	forged := []byte(b64(k, good))
	forged[60] ^= 'A' ^ 'B'
	out := runAccounts(t, ctx, dir, python, "nnas", "--url", fmt.Sprintf("127.0.0.1:%d", web), "--access-key", "3d37fbdb",
		"--game-server-id", "1010EB00", "--nnid", "WiiUPlayer", "--pid", "1750000001", "--password", "correct horse",
		"--refuse", "expired="+b64(k, expired), "--refuse", "other-player="+b64(k, otherPlayer),
		"--refuse", "other-game="+b64(k, otherGame), "--refuse", "forged="+string(forged))
	for _, w := range []string{"STEP access-token length=32 refresh=40 expires=3600",
		"STEP profile nnid=WiiUPlayer pid=1750000001", "mii='Wii Mii'",
		"STEP mapped pid=1750000001 nnid=WiiUPlayer", "STEP miis count=1 name='Wii Mii'",
		fmt.Sprintf("STEP nex-token host=127.0.0.1 port=%d pid=1750000001 password_length=16 token_length=64", port),
		"STEP nnas-error status=400 code=1021", "STEP nex-login pid=1750000001"} {
		if !strings.Contains(strings.Join(out, "\n"), w) {
			t.Errorf("no %q in the steps", w)
		}
	}
	wantRefused(t, out, map[string]types.Result{"expired": types.AuthenticationTokenExpired,
		"other-player": types.AuthenticationPrincipalIDUnmatched, "other-game": types.AuthenticationValidationFailed,
		"forged": types.AuthenticationValidationFailed})
}

// TestNintendoClientsNASCLogin is issue 26's second done-when:
// NintendoClients' NASCClient LOGIN (set_url to gamewire, no TLS) for a 3DS
// account made with gamewire accounts add returns a locator and token, and
// NintendoClients' backend logs in there with the account's NEX password and
// that token; an expired token and another player's are refused.
func TestNintendoClientsNASCLogin(t *testing.T) {
	dir, python := env(t)
	needAccountModules(t, dir)
	bin := buildGamewire(t)
	data := filepath.Join(t.TempDir(), "gamewire")
	gamewireCLI(t, bin, "3ds-nex-password\n", "accounts", "add", "--pid", "1800000123", "--data", data, "--password-stdin")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	port, web := serveAccounts(t, bin, data, "00030600")

	k := testKeys(t)
	tok := credentials.Token{Type: credentials.TypeNEX, System: credentials.System3DS, PID: 1800000123,
		Expires: time.Now().Add(-time.Minute), GameServerID: 0x00030600}
	expired := credentials.NintendoBase64(k.Seal(tok))
	tok.PID, tok.Expires = 1800000124, time.Now().Add(time.Hour)
	otherPlayer := credentials.NintendoBase64(k.Seal(tok))
	out := runAccounts(t, ctx, dir, python, "nasc", "--url", fmt.Sprintf("127.0.0.1:%d", web), "--access-key", "3d37fbdb",
		"--game-server-id", "00030600", "--title-id", "0004000000030600", "--pid", "1800000123", "--password", "3ds-nex-password",
		"--refuse", "expired="+expired, "--refuse", "other-player="+otherPlayer)
	joined := strings.Join(out, "\n")
	for _, w := range []string{fmt.Sprintf("STEP nasc-login host=127.0.0.1 port=%d token_length=64", port), "STEP nex-login pid=1800000123"} {
		if !strings.Contains(joined, w) {
			t.Errorf("no %q in the steps", w)
		}
	}
	wantRefused(t, out, map[string]types.Result{"expired": types.AuthenticationTokenExpired,
		"other-player": types.AuthenticationPrincipalIDUnmatched})
}

// TestNintendoClientsSwitchIDToken is issue 26's third done-when:
// NintendoClients' switch profile (NEX 4.0 ValidateAndRequestTicketWithCustomData
// and NEX 4.6 ValidateAndRequestTicketWithParam, over ws://) logs in to gamewire serve --dialect nex-lite --switch-jwks with
// an ID token from gamewire keygen switch-token signed by the pinned key, no
// password (the ticket opens with the returned pSourceKey); a token signed by
// another key or for another title is refused.
func TestNintendoClientsSwitchIDToken(t *testing.T) {
	dir, python := env(t)
	needWebSocket(t, dir)
	bin := buildGamewire(t)
	keys := t.TempDir()
	gamewireCLI(t, bin, "", "keygen", "switch-issuer", "--out", filepath.Join(keys, "pinned"))
	gamewireCLI(t, bin, "", "keygen", "switch-issuer", "--out", filepath.Join(keys, "other"))
	const title, user = "01009B90006DC000", "81985529216486895" // user 0x0123456789abcdef
	mint := func(key, title string) string {
		return strings.TrimSpace(gamewireCLI(t, bin, "", "keygen", "switch-token", "--key", filepath.Join(keys, key, "issuer.pem"),
			"--pid", user, "--title-id", title))
	}
	port := freeTCPPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--dialect", "nex-lite", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--access-key", "6f599f81", "--data", t.TempDir(), "--switch-jwks", filepath.Join(keys, "pinned", "jwks.json"),
		"--switch-title-id", title)()
	waitTCP(t, port)
	// NEX 4.0-4.3 clients call ValidateAndRequestTicketWithCustomData, 4.4+
	// ValidateAndRequestTicketWithParam (NintendoClients backend.py).
	for _, version := range []string{"40000", "40601"} {
		t.Run(version, func(t *testing.T) {
			out := runAccounts(t, ctx, dir, python, "switch", "--url", fmt.Sprintf("127.0.0.1:%d", port), "--access-key", "6f599f81",
				"--nex-version", version, "--pid", user, "--id-token", mint("pinned", title),
				"--refuse", "other-key="+mint("other", title), "--refuse", "other-title="+mint("pinned", "0100000000010000"))
			if !strings.Contains(strings.Join(out, "\n"), "STEP nex-login pid="+user) {
				t.Errorf("no Switch login as %s", user)
			}
			wantRefused(t, out, map[string]types.Result{"other-key": types.AuthenticationValidationFailed,
				"other-title": types.AuthenticationValidationFailed})
		})
	}
}
