package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// `gamewire nex datastore put|get`: the DataStore protocol (115) as a console
// uses it, after the login flow of gamewire login: a post (PreparePostObject,
// the body over HTTP, CompletePostObject) and a get (GetMeta,
// PrepareGetObject, the body over HTTP).

func newNEXDataStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "datastore",
		Short: "Store and fetch objects on a NEX server's DataStore service (protocol 115)",
		Long: `datastore logs in as gamewire login does (same flags), then posts a file as a new
object or fetches one; bodies travel over HTTP to the URLs the server hands out.

  gamewire nex datastore put FILE --user U --password P [--server ADDR]
      [--name N] [--data-type T] [--tag T]... [--permission everyone|recipients|owner]
      [--recipient PID]... [--period DAYS]
  gamewire nex datastore get ID --user U --password P [--server ADDR] [--out FILE] [--access-password N]

put prints the new object's data id; get writes the body to --out (default stdout)
and the metadata to stderr. With --format json each prints one JSON record on
stdout (get: the metadata; the body then goes only to --out).`,
	}
	putOpts, getOpts := &nexDataStoreOptions{}, &nexDataStoreOptions{}
	put := &cobra.Command{Use: "put FILE", Short: "Post a file as a new object", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runNEXDataStorePut(cmd, putOpts, args[0]) }}
	get := &cobra.Command{Use: "get ID", Short: "Fetch an object's body and metadata", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runNEXDataStoreGet(cmd, getOpts, args[0]) }}
	for _, c := range []struct {
		cmd *cobra.Command
		o   *nexDataStoreOptions
	}{{put, putOpts}, {get, getOpts}} {
		c.o.registerLogin(c.cmd)
		addFormatFlag(c.cmd, &c.o.format)
		c.cmd.Flags().StringVar(&c.o.server, "server", nex.DefaultAddr, "the NEX authentication server (a URL with --dialect nex-lite)")
	}
	f := put.Flags()
	f.StringVar(&putOpts.name, "name", "", "the object's name (default: the file's name)")
	f.Uint16Var(&putOpts.dataType, "data-type", 0, "the object's data type")
	f.StringArrayVar(&putOpts.tags, "tag", nil, "a tag (repeatable)")
	f.StringVar(&putOpts.permission, "permission", "everyone", "who may read it: everyone, recipients (--recipient) or owner")
	f.UintSliceVar(&putOpts.recipients, "recipient", nil, "a PID that may read it (with --permission recipients)")
	f.Uint16Var(&putOpts.period, "period", 90, "days until it expires (0: never)")
	f = get.Flags()
	f.StringVar(&getOpts.out, "out", "", "write the body here (default stdout)")
	f.Uint64Var(&getOpts.accessPW, "access-password", 0, "the object's access password, for objects not shared with you")
	cmd.AddCommand(put, get)
	return cmd
}

// nexDataStoreOptions are the flags of nex datastore put and get.
type nexDataStoreOptions struct {
	loginOptions
	server     string
	name       string
	dataType   uint16
	tags       []string
	permission string
	recipients []uint
	period     uint16
	out        string
	accessPW   uint64
}

func runNEXDataStorePut(cmd *cobra.Command, o *nexDataStoreOptions, file string) error {
	body, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("nex datastore put: %w", err)
	}
	p := datastore.PreparePostParam{Name: o.name, DataType: o.dataType, Tags: o.tags, Period: o.period,
		DelPermission: datastore.Permission{Permission: datastore.PermissionOwner}, PersistenceSlotID: datastore.NoPersistenceSlot}
	if p.Name == "" {
		p.Name = file
	}
	switch o.permission {
	case "everyone":
		p.Permission.Permission = datastore.PermissionEveryone
	case "recipients":
		p.Permission.Permission = datastore.PermissionRecipients
	case "owner":
		p.Permission.Permission = datastore.PermissionOwner
	default:
		return fmt.Errorf("nex datastore put: --permission %q: everyone, recipients or owner", o.permission)
	}
	for _, r := range o.recipients {
		p.Permission.RecipientIDs = append(p.Permission.RecipientIDs, types.PID(r))
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	sess, err := o.login(ctx, o.server)
	if err != nil {
		return fmt.Errorf("nex datastore put: %w", err)
	}
	defer closeSession(sess)
	id, err := (&datastore.Client{C: sess.RMC}).Put(ctx, p, body)
	if err != nil {
		return fmt.Errorf("nex datastore put: %w", err)
	}
	if o.format.json() {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"data_id": id, "size": len(body)})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "data id %d (%d bytes)\n", id, len(body))
	return nil
}

func runNEXDataStoreGet(cmd *cobra.Command, o *nexDataStoreOptions, arg string) error {
	id, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		return fmt.Errorf("nex datastore get: data id %q is not a number: give the decimal id nex datastore put printed", arg)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	sess, err := o.login(ctx, o.server)
	if err != nil {
		return fmt.Errorf("nex datastore get: %w", err)
	}
	defer closeSession(sess)
	mi, body, err := (&datastore.Client{C: sess.RMC}).Get(ctx, id, o.accessPW)
	if err != nil {
		return fmt.Errorf("nex datastore get: %w", err)
	}
	if o.format.json() {
		// The metadata as a record on stdout; the body only to --out.
		rec := map[string]any{"data_id": mi.DataID, "name": mi.Name, "owner": mi.OwnerID, "size": mi.Size, "data_type": mi.DataType,
			"tags": mi.Tags, "created": mi.CreatedTime.String(), "expires": mi.ExpireTime.String()}
		if err := writeJSON(cmd.OutOrStdout(), rec); err != nil {
			return err
		}
		if o.out == "" {
			return nil
		}
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "data id %d: %q owner %d, %d bytes, data type %d, tags %v, created %s, expires %s\n",
			mi.DataID, mi.Name, mi.OwnerID, mi.Size, mi.DataType, mi.Tags, mi.CreatedTime, mi.ExpireTime)
	}
	if o.out == "" {
		_, err = cmd.OutOrStdout().Write(body)
		return err
	}
	if err := os.WriteFile(o.out, body, 0o644); err != nil {
		return fmt.Errorf("nex datastore get: %w", err)
	}
	return nil
}
