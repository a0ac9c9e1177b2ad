// Command httprules writes the REST API's grpc-gateway configuration
// (http.yaml) from the (jobboard.rest.v2.route) option of each rpc. It
// reads the protos as buf builds them, not as the generated code last
// compiled them, so it runs before buf generate, which reads the file:
//
//	buf build --as-file-descriptor-set -o - | go run ./internal/cmd/httprules proto/jobboard/rest/v2/http.yaml
package main

import (
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/truckjobs/jobboard/internal/restroutes"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: buf build --as-file-descriptor-set -o - | httprules FILE")
		os.Exit(2)
	}
	if err := run(os.Stdin, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "httprules:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out string) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	// The route options decode as restv2.Route: restroutes links the
	// generated code, which registers the extension.
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return fmt.Errorf("read the descriptor set: %w", err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return err
	}
	routes, err := restroutes.From(files)
	if err != nil {
		return err
	}
	if len(routes) == 0 {
		// Never an empty http.yaml for a build that failed upstream.
		return fmt.Errorf("no rpc of %s in the %d bytes read", restroutes.Package, len(data))
	}
	return os.WriteFile(out, restroutes.HTTPConfig(routes), 0o644)
}
