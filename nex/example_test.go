package nex_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
)

// The client side: log in and call methods on the secure server.
func ExampleLogin() {
	ctx := context.Background()
	sess, err := nex.Login(ctx, "127.0.0.1:60000", nex.LoginConfig{
		User: "guest", Password: auth.GuestPassword,
		Config: prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)
	fmt.Println(sess.PID, sess.PublicURL, sess.ConnectionID)
}
