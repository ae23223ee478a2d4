package friends

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/gamewire/gamewire/nex/protocols/account"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// accountManagement answers the one AccountManagement (25) method the
// consoles call on the friends server, NintendoCreateAccount; the others stay
// Core::NotImplemented.
type accountManagement struct{ account.UnimplementedAccount }

// NintendoCreateAccount answers a console's account creation with the
// caller's PID and its PID HMAC: HMAC-MD5 keyed with the key the console sent
// over the PID's four little-endian bytes, in hex, which the console keeps to
// prove its PID to NASC later (the uidhmac field). The account itself exists
// already: the console logged in with it (gamewire's accounts are made by
// `gamewire accounts add` or the NASC/NNAS endpoints), so nothing is created
// and the authentication data (a NEX token) is not read. Facts from
// Pretendo's friends server, which answers the same two values.
func (accountManagement) NintendoCreateAccount(ctx context.Context, c *rmc.Call, name, key string, groups uint32, email string, auth types.AnyData) (types.PID, string, error) {
	if key == "" || len(key) > 256 {
		return 0, "", fmt.Errorf("%w: a key of %d bytes", types.CoreInvalidArgument, len(key))
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(c.Peer.PID))
	m := hmac.New(md5.New, []byte(key))
	m.Write(b[:])
	return c.Peer.PID, hex.EncodeToString(m.Sum(nil)), nil
}

// ParamError answers parameters that do not decode with Core::InvalidArgument.
func (accountManagement) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %v", types.CoreInvalidArgument, err)
}
