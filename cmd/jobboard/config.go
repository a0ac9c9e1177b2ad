package main

import (
	"flag"
	"fmt"
	"os"
)

// config is the service's configuration: environment first, flags override.
type config struct {
	databaseURL   string
	httpAddr      string
	grpcAddr      string
	publicURL     string
	internalToken string
}

// setting registers a string flag whose default comes from env, and names
// the variable in the help text.
func setting(fs *flag.FlagSet, p *string, name, env, def, help string) {
	v := def
	if e, ok := os.LookupEnv(env); ok {
		v = e
	}
	fs.StringVar(p, name, v, fmt.Sprintf("%s (env %s)", help, env))
}

func (c *config) databaseFlag(fs *flag.FlagSet) {
	setting(fs, &c.databaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL connection URL")
}

func (c *config) serveFlags(fs *flag.FlagSet) {
	setting(fs, &c.httpAddr, "http-addr", "JOBBOARD_HTTP_ADDR", ":8080", "REST listen address")
	setting(fs, &c.grpcAddr, "grpc-addr", "JOBBOARD_GRPC_ADDR", ":9090", "gRPC listen address")
	setting(fs, &c.publicURL, "public-url", "JOBBOARD_PUBLIC_URL", "", "absolute base URL used in links (default: from each request)")
	setting(fs, &c.internalToken, "internal-token", "JOBBOARD_INTERNAL_TOKEN", "", "token the board's internal services call gRPC with (empty: internal access off)")
}

// requireDatabase is the usage error of a command run without a database.
func (c *config) requireDatabase(command string) error {
	if c.databaseURL == "" {
		return usageError{command + ": DATABASE_URL (or --database-url) is required"}
	}
	return nil
}
