package grpcapi

import (
	"fmt"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/internal/rpcfacts"
	"github.com/truckjobs/jobboard/internal/rules"
)

// maxRequestLimit is the largest request limit of any method: grpc-go's receive limit
// for the whole server, which has no limit per method. Each method's own
// limit is then checked by requestCodec, before the message is decoded.
//
// What this costs: grpc-go holds a message in memory as it arrives, up to
// this limit, before the codec can refuse it. Only authenticated callers
// reach a service method (the tap handle refuses the others before any
// message is read) and they are rate limited, so one caller can make the
// server hold 64 MiB for each call it has in flight, at most 32 times what
// it sends (gzip requests expand no more: compression.go) (measured on jobboard dev: a 64 MiB ListDrivers, refused, raised the
// server's peak RSS from 44 to 98 MB; four at once to 251 MB).
// Health and reflection are open: their messages are held the same way and
// refused above rules.DefaultLimit before being decoded, so a caller
// without credentials could make the server hold as much; anonymousCalls
// bounds how many such calls are being read at once.
//
// A message over this limit (a CreateJobImport over 64 MiB) is refused by
// grpc-go as soon as its length is read, before anything is held, and in its
// own words, which the server cannot change: grpc-go writes the status
// itself. They name both sizes: "grpc: received message larger than max
// (67108865 vs. 67108864)".
var maxRequestLimit = largestLimit(rpcfacts.Methods())

func largestLimit(methods []rpcfacts.Method) int {
	largest := rules.DefaultLimit
	for _, m := range methods {
		largest = max(largest, m.RequestLimit)
	}
	return largest
}

// requestLimit is the largest request message method takes: what its
// (jobboard.v2.facts) declare, which for an operation REST serves too is
// what REST takes (docs/api.md 7.2); rules.DefaultLimit for gRPC's own
// services. For a streaming method the limit holds for each message.
func requestLimit(fullMethod string) int {
	if m, ok := rpcfacts.Of(fullMethod); ok {
		return m.RequestLimit
	}
	return rules.DefaultLimit
}

// tooLarge is the ResourceExhausted for a request message of size bytes
// sent to a method that takes at most limit. The QuotaFailure detail names
// the limit for clients that read details.
func tooLarge(fullMethod string, limit, size int) error {
	name := fullMethod[strings.LastIndex(fullMethod, "/")+1:]
	st := status.Newf(codes.ResourceExhausted, "%s takes at most %s (%s bytes); this message is %s bytes",
		name, rules.MiB(limit), rules.GroupDigits(limit), rules.GroupDigits(size))
	quota := &errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
		Subject:     fullMethod,
		Description: fmt.Sprintf("request message size: at most %d bytes", limit),
	}}}
	if withQuota, err := st.WithDetails(quota); err == nil {
		st = withQuota
	}
	return st.Err()
}
