package rpcfacts

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/emptypb" // the test rpc's messages

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// TestEveryRpcDeclaresItsFacts: each rpc of the jobboard.v2 services has
// its facts, complete, so none is left out of Methods.
func TestEveryRpcDeclaresItsFacts(t *testing.T) {
	for _, p := range Problems() {
		t.Error(p)
	}
	rpcs := 0
	protoregistry.GlobalFiles.RangeFilesByPackage(Package, func(f protoreflect.FileDescriptor) bool {
		for i := range f.Services().Len() {
			rpcs += f.Services().Get(i).Methods().Len()
		}
		return true
	})
	if rpcs < 20 || len(Methods()) != rpcs {
		t.Errorf("%d rpcs with facts of %d in %s", len(Methods()), rpcs, Package)
	}
}

// TestFactsOfKnownRpcs pins a few facts the service's behaviour rests on.
func TestFactsOfKnownRpcs(t *testing.T) {
	tests := []struct {
		method    string
		caller    jobboardv2.Caller
		limit     int
		retrySafe bool
	}{
		{jobboardv2.JobService_PostJobs_FullMethodName, jobboardv2.Caller_CALLER_ACCOUNT, rules.JobsPostLimit, true},
		{jobboardv2.JobService_GetJob_FullMethodName, jobboardv2.Caller_CALLER_ACCOUNT, rules.DefaultLimit, true},
		{jobboardv2.JobImportService_CreateJobImport_FullMethodName, jobboardv2.Caller_CALLER_ACCOUNT, rules.JobImportLimit, true},
		{jobboardv2.DriverIntakeService_SubmitApplication_FullMethodName, jobboardv2.Caller_CALLER_INTERNAL, rules.DefaultLimit, true},
		{jobboardv2.JobSearchService_SearchJobs_FullMethodName, jobboardv2.Caller_CALLER_INTERNAL, rules.DefaultLimit, true},
		{jobboardv2.WebhookService_TestWebhook_FullMethodName, jobboardv2.Caller_CALLER_ACCOUNT, rules.DefaultLimit, false},
	}
	for _, tt := range tests {
		m, ok := Of(tt.method)
		if !ok || m.Caller != tt.caller || m.RequestLimit != tt.limit || m.RetrySafe != tt.retrySafe {
			t.Errorf("%s: %+v %v, want caller %v, limit %d, retry safe %v", tt.method, m, ok, tt.caller, tt.limit, tt.retrySafe)
		}
	}
	if _, ok := Of("/grpc.health.v1.Health/Check"); ok {
		t.Error("facts for gRPC's health check")
	}
}

// TestReadRefusesMissingFacts: an rpc without the option, or with a fact
// left undecided, is a problem, not a method with defaults.
func TestReadRefusesMissingFacts(t *testing.T) {
	tests := []struct {
		name  string
		facts *jobboardv2.RpcFacts
	}{
		{"no option", nil},
		{"no caller", &jobboardv2.RpcFacts{RetrySafe: proto.Bool(true)}},
		{"no retry", &jobboardv2.RpcFacts{Caller: jobboardv2.Caller_CALLER_ACCOUNT}},
		{"negative limit", &jobboardv2.RpcFacts{Caller: jobboardv2.Caller_CALLER_ACCOUNT, RetrySafe: proto.Bool(false), RequestLimitBytes: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := read(methodWith(t, tt.facts)); err == nil {
				t.Error("read it")
			}
		})
	}
	m, err := read(methodWith(t, &jobboardv2.RpcFacts{Caller: jobboardv2.Caller_CALLER_INTERNAL, RetrySafe: proto.Bool(false)}))
	if err != nil || m.RequestLimit != rules.DefaultLimit || m.FullName != "/test.v1.S/M" {
		t.Errorf("complete facts: %+v %v", m, err)
	}
}

// methodWith is rpc M of a service test.v1.S whose options hold facts
// (none for nil).
func methodWith(t *testing.T, facts *jobboardv2.RpcFacts) protoreflect.MethodDescriptor {
	t.Helper()
	opts := &descriptorpb.MethodOptions{}
	if facts != nil {
		proto.SetExtension(opts, jobboardv2.E_Facts, facts)
	}
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("test.proto"), Package: proto.String("test.v1"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/empty.proto"},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("S"), Method: []*descriptorpb.MethodDescriptorProto{{
			Name: proto.String("M"), InputType: proto.String(".google.protobuf.Empty"), OutputType: proto.String(".google.protobuf.Empty"), Options: opts,
		}}}},
	}, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Services().Get(0).Methods().Get(0)
}
