package hyperscape_test

import (
	"fmt"

	"github.com/gamewire/gamewire/prudp/hyperscape"
)

// The CONNECT key exchange, then one DATA payload each way.
func Example() {
	cert, err := hyperscape.GenerateCertKey() // or LoadPrivateKey("key.pem")
	if err != nil {
		panic(err)
	}

	client, err := hyperscape.NewClient(&cert.PublicKey) // or LoadPublicKey("key.pub.pem")
	if err != nil {
		panic(err)
	}
	clientPub := client.PublicKey() // goes into the client's CONNECT

	hello, serverKey, err := hyperscape.Respond(clientPub[:], cert) // the server's CONNECT ack
	if err != nil {
		panic(err)
	}
	clientKey, err := client.Finish(hello.PublicKey[:], hello.Signature, hello.Tag[:])
	if err != nil {
		panic(err)
	}

	toServer, _ := hyperscape.NewDataCipher(clientKey)
	atServer, _ := hyperscape.NewDataCipher(serverKey)
	payload := toServer.Seal(nil, []byte("hello"), 7, true)
	msg, err := atServer.Open(nil, payload, 7, 1024)
	fmt.Printf("%s %v\n", msg, err)
	// Output: hello <nil>
}
