package descriptors

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// The embedded set describes exactly what gen/ was generated from: stripped
// of comments, each file equals the descriptor protoc-gen-go compiled in.
func TestMatchesGeneratedCode(t *testing.T) {
	want := jobboardv2.File_jobboard_v2_jobs_proto.Package()
	n := 0
	protoregistry.GlobalFiles.RangeFilesByPackage(want, func(gen protoreflect.FileDescriptor) bool {
		n++
		embedded, err := files.FindFileByPath(gen.Path())
		if err != nil {
			t.Errorf("%s is not in jobboard.binpb: run make generate", gen.Path())
			return true
		}
		got := protodesc.ToFileDescriptorProto(embedded)
		got.SourceCodeInfo = nil
		if diff := cmp.Diff(protodesc.ToFileDescriptorProto(gen), got, protocmp.Transform()); diff != "" {
			t.Errorf("%s: jobboard.binpb differs from gen/ (run make generate) (-gen +embedded):\n%s", gen.Path(), diff)
		}
		return true
	})
	if n == 0 || files.NumFilesByPackage(want) != n {
		t.Errorf("%d files of %s in gen/, %d in jobboard.binpb", n, want, files.NumFilesByPackage(want))
	}
}

// Every service, method and message reaches reflection with its comment.
func TestComments(t *testing.T) {
	for _, name := range []protoreflect.FullName{
		"jobboard.v2.JobService", "jobboard.v2.DriverService", "jobboard.v2.DriverIntakeService",
		"jobboard.v2.JobImportService", "jobboard.v2.JobService.PostJobs", "jobboard.v2.Job",
	} {
		d, err := Resolver().FindDescriptorByName(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c := d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments; strings.TrimSpace(c) == "" {
			t.Errorf("%s has no comment", name)
		}
	}
}

// What the API does not define still resolves, from the global registry.
func TestFallback(t *testing.T) {
	name := grpc_health_v1.File_grpc_health_v1_health_proto.Services().Get(0).FullName()
	d, err := Resolver().FindDescriptorByName(name)
	if err != nil || d.FullName() != name {
		t.Fatalf("%s: %v %v", name, d, err)
	}
	if _, err := Resolver().FindFileByPath("grpc/health/v1/health.proto"); err != nil {
		t.Error(err)
	}
	if _, err := Resolver().FindDescriptorByName("jobboard.v2.Nope"); err == nil {
		t.Error("an unknown name resolved")
	}
	if _, err := parse([]byte("not a descriptor set")); err == nil {
		t.Error("garbage parsed")
	}
}

// Both reflection versions answer with the comments, and list the services
// registered on the server.
func TestRegisterReflection(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	grpc_health_v1.RegisterHealthServer(srv, health.NewServer())
	RegisterReflection(srv)
	go srv.Serve(lis)
	defer srv.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// v1alpha is v1 under another package name: the same messages on the
	// wire, so one v1 client serves both through the raw method names.
	for _, method := range []string{
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
		"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
	} {
		stream, err := conn.NewStream(context.Background(), &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method)
		if err != nil {
			t.Fatal(err)
		}
		ask := func(req *reflectionv1.ServerReflectionRequest) *reflectionv1.ServerReflectionResponse {
			t.Helper()
			if err := stream.SendMsg(req); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			resp := new(reflectionv1.ServerReflectionResponse)
			if err := stream.RecvMsg(resp); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			return resp
		}
		list := ask(&reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{}})
		var names []string
		for _, s := range list.GetListServicesResponse().GetService() {
			names = append(names, s.GetName())
		}
		if !slices.Contains(names, "grpc.health.v1.Health") {
			t.Errorf("%s: services %v", method, names)
		}
		for _, symbol := range []string{"jobboard.v2.JobService", "grpc.health.v1.Health"} {
			resp := ask(&reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol}})
			raw := resp.GetFileDescriptorResponse().GetFileDescriptorProto()
			if len(raw) == 0 {
				t.Errorf("%s %s: %v", method, symbol, resp)
				continue
			}
			var fd descriptorpb.FileDescriptorProto
			if err := proto.Unmarshal(raw[0], &fd); err != nil {
				t.Fatal(err)
			}
			hasComments := slices.ContainsFunc(fd.GetSourceCodeInfo().GetLocation(), func(l *descriptorpb.SourceCodeInfo_Location) bool {
				return strings.Contains(l.GetLeadingComments(), "JobService publishes")
			})
			if wantComments := symbol == "jobboard.v2.JobService"; hasComments != wantComments {
				t.Errorf("%s %s: file %s, comments %v, want %v", method, symbol, fd.GetName(), hasComments, wantComments)
			}
		}
		if err := stream.CloseSend(); err != nil {
			t.Fatal(err)
		}
	}
}
