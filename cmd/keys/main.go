// Command keys creates accounts and API keys, or revokes keys, directly in the table of any
// deployment: DynamoDB Local or AWS, whichever the usual AWS environment variables reach.
//
//	go run ./cmd/keys create -account acme -role admin [-name ci] [-key SECRET]
//	go run ./cmd/keys revoke -key SECRET
//	go run ./cmd/keys limits -account acme [-pages_per_website N] [-audits_per_day N] [-runs_per_day N] [-beacons_per_day N]
//
// limits sets an account's limits (a value of -1 goes back to the default) and prints them.
//
// The table is OPENVITALS_TABLE (default "openvitals"; for AWS, the stack's TableName output).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "keys:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "revoke" && args[0] != "limits") {
		return fmt.Errorf("usage: keys create -account NAME -role admin|viewer [-name LABEL] [-key SECRET] | keys revoke -key SECRET | keys limits -account NAME [-LIMIT N]...")
	}
	if args[0] == "limits" {
		return setLimits(ctx, args[1:], out)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	account := fs.String("account", "", "account name (created if new): 1 to 64 of a-z, 0-9, '-' and '_'")
	role := fs.String("role", "admin", "admin or viewer")
	name := fs.String("name", "", "a label for the key, e.g. who uses it")
	key := fs.String("key", "", "the key's secret; omitted on create, a random one is generated")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}

	if args[0] == "revoke" {
		if *key == "" {
			return fmt.Errorf("revoke needs -key")
		}
		if err := st.DeleteAPIKey(ctx, apikey.Hash(*key)); err != nil {
			return err
		}
		fmt.Fprintln(out, "revoked")
		return nil
	}

	secret := *key
	if secret == "" {
		secret = apikey.Generate()
	}
	grants, err := apikey.ParseGrants(*account + ":" + *role + ":" + secret)
	if err != nil {
		return err
	}
	if err := apikey.Provision(ctx, st, grants[0], *name); err != nil {
		return err
	}
	fmt.Fprintf(out, "account %s, %s key (only its hash is stored; keep it now):\n%s\n", *account, *role, secret)
	return nil
}

// setLimits sets the limits the flags name for an account and prints all of its limits.
func setLimits(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("limits", flag.ContinueOnError)
	account := fs.String("account", "", "the account")
	values := map[quota.Limit]*int{}
	for _, l := range quota.Limits {
		values[l] = fs.Int(string(l), 0, fmt.Sprintf("the account's %s (default %d; -1 restores the default)", l, quota.Defaults[l]))
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !apikey.ValidAccount(*account) {
		return fmt.Errorf("limits needs -account, a valid account name")
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	limits, err := st.AccountLimits(ctx, *account)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, l := range quota.Limits {
		v := *values[l]
		switch {
		case !set[string(l)]:
		case v == -1:
			delete(limits, string(l))
		case v < 0 || v > 1_000_000_000:
			return fmt.Errorf("-%s %d: want 0 to 1000000000, or -1 for the default", l, v)
		default:
			limits[string(l)] = v
		}
	}
	if len(set) > 1 {
		if err := st.SetAccountLimits(ctx, *account, limits); err != nil {
			return err
		}
	}
	for _, l := range quota.Limits {
		note := ""
		if _, ok := limits[string(l)]; !ok {
			note = " (default)"
		}
		fmt.Fprintf(out, "%s %d%s\n", l, quota.Of(limits, l), note)
	}
	return nil
}

// openStore opens the table the environment names (OPENVITALS_TABLE and the AWS variables).
func openStore(ctx context.Context) (*store.Store, error) {
	cfg, err := service.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	clients, err := awsclient.New(ctx)
	if err != nil {
		return nil, err
	}
	return store.New(clients.DynamoDB, cfg.Table), nil
}
