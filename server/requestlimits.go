package server

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// requestLimits is the largest request message each gRPC method takes, in
// bytes, by full method name: what the REST API takes for the same
// operation (contract §9). A method not listed takes rules.DefaultLimit;
// for a streaming method the limit holds for each message.
var requestLimits = map[string]int{
	jobboardv2.JobService_PostJobs_FullMethodName:                    rules.JobsPostLimit,
	jobboardv2.JobImportService_CreateJobImport_FullMethodName:       rules.JobImportLimit,
	jobboardv2.DriverIntakeService_SubmitApplications_FullMethodName: applicationsBatchLimit,
}

// applicationsBatchLimit is the request limit of SubmitApplications, which
// REST has no operation for: a batch of MaxBatchApplications that average
// 16 KiB each, room for long employment histories and free text. A typical
// application is some 200 bytes (1,000 of bench scenario 9's: 184 KiB), so
// the 1 MiB default would refuse a full batch of applications averaging
// over 1 KiB.
const applicationsBatchLimit = 16 << 20

// maxRequestLimit is the largest of requestLimits: grpc-go's receive limit
// for the whole server, which has no limit per method. Each method's own
// limit is then checked by requestCodec, before the message is decoded.
//
// What this costs: grpc-go holds a message in memory as it arrives, up to
// this limit, before the codec can refuse it. Only authenticated callers
// reach a service method (the tap handle refuses the others before any
// message is read) and they are rate limited, so one caller can make the
// server hold 64 MiB for each call it has in flight, at most 32 times what
// it sends (gzip requests expand no more: server/compression.go) (measured on jobboard dev: a 64 MiB ListDrivers, refused, raised the
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
var maxRequestLimit = largestLimit(requestLimits)

func largestLimit(limits map[string]int) int {
	largest := rules.DefaultLimit
	for _, n := range limits {
		largest = max(largest, n)
	}
	return largest
}

// requestLimit is the largest request message method takes.
func requestLimit(fullMethod string) int {
	if n, ok := requestLimits[fullMethod]; ok {
		return n
	}
	return rules.DefaultLimit
}

// tooLarge is the ResourceExhausted for a request message of size bytes
// sent to a method that takes at most limit. The QuotaFailure detail names
// the limit for clients that read details.
func tooLarge(fullMethod string, limit, size int) error {
	name := fullMethod[strings.LastIndex(fullMethod, "/")+1:]
	st := status.Newf(codes.ResourceExhausted, "%s takes at most %s (%s bytes); this message is %s bytes",
		name, mebibytes(limit), groupDigits(limit), groupDigits(size))
	quota := &errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
		Subject:     fullMethod,
		Description: fmt.Sprintf("request message size: at most %d bytes", limit),
	}}}
	if withQuota, err := st.WithDetails(quota); err == nil {
		st = withQuota
	}
	return st.Err()
}

// mebibytes writes a size in MiB: "16 MiB", "1.5 MiB".
func mebibytes(n int) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MiB"
}

// groupDigits writes n with a comma between groups of three digits.
func groupDigits(n int) string {
	if n < 0 {
		return "-" + groupDigits(-n)
	}
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
