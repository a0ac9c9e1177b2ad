// Package rpcfacts reads what each rpc of the jobboard.v2 services declares
// in its (jobboard.v2.facts) option: who may call it, the largest request it
// takes, whether a client may repeat it. The server, the Go client and the
// tests read them here, from the descriptors compiled into the generated
// code, so the protos are the one place they are written.
package rpcfacts

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// Package is the proto package whose rpcs declare facts.
const Package = "jobboard.v2"

// Method is one rpc and its facts.
type Method struct {
	// FullName is the rpc's name as gRPC calls it: "/jobboard.v2.JobService/PostJobs".
	FullName string
	// Service and Name are its service's full name and its own.
	Service, Name string
	Caller        jobboardv2.Caller
	// RequestLimit is the largest request message it takes, in bytes.
	RequestLimit int
	// RetrySafe says a client may repeat it after UNAVAILABLE.
	RetrySafe bool
}

var (
	methods  []Method
	byName   = map[string]Method{}
	problems []string
)

func init() {
	protoregistry.GlobalFiles.RangeFilesByPackage(Package, func(f protoreflect.FileDescriptor) bool {
		services := f.Services()
		for i := range services.Len() {
			rpcs := services.Get(i).Methods()
			for j := range rpcs.Len() {
				m, err := read(rpcs.Get(j))
				if err != nil {
					problems = append(problems, err.Error())
					continue
				}
				methods = append(methods, m)
				byName[m.FullName] = m
			}
		}
		return true
	})
	slices.SortFunc(methods, func(a, b Method) int { return strings.Compare(a.FullName, b.FullName) })
}

// read takes the facts of one rpc, refusing an rpc whose facts are missing
// or leave a fact undecided.
func read(md protoreflect.MethodDescriptor) (Method, error) {
	m := Method{FullName: "/" + string(md.Parent().FullName()) + "/" + string(md.Name()),
		Service: string(md.Parent().FullName()), Name: string(md.Name())}
	opts := md.Options()
	if opts == nil || !proto.HasExtension(opts, jobboardv2.E_Facts) {
		return m, fmt.Errorf("%s declares no (jobboard.v2.facts)", m.FullName)
	}
	f := proto.GetExtension(opts, jobboardv2.E_Facts).(*jobboardv2.RpcFacts)
	switch {
	case f.GetCaller() == jobboardv2.Caller_CALLER_UNSPECIFIED:
		return m, fmt.Errorf("%s: (jobboard.v2.facts).caller is not set", m.FullName)
	case f.RetrySafe == nil:
		return m, fmt.Errorf("%s: (jobboard.v2.facts).retry_safe is not set", m.FullName)
	case f.GetRequestLimitBytes() < 0:
		return m, fmt.Errorf("%s: (jobboard.v2.facts).request_limit_bytes is negative", m.FullName)
	}
	m.Caller, m.RetrySafe = f.GetCaller(), f.GetRetrySafe()
	m.RequestLimit = rules.DefaultLimit
	if n := f.GetRequestLimitBytes(); n > 0 {
		m.RequestLimit = int(n)
	}
	return m, nil
}

// Methods returns every rpc of the jobboard.v2 services that declares its
// facts, by full name.
func Methods() []Method { return slices.Clone(methods) }

// Of returns the facts of an rpc by its full name; false for an rpc outside
// jobboard.v2 (gRPC's health and reflection) or one without facts.
func Of(fullName string) (Method, bool) {
	m, ok := byName[fullName]
	return m, ok
}

// Problems lists the rpcs whose facts are missing or incomplete: each is
// left out of Methods, so the server treats it as needing an account and
// the default limit, and the client does not retry it. A test keeps the
// list empty.
func Problems() []string { return slices.Clone(problems) }
