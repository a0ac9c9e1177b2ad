// Package descriptors serves the API's protobuf descriptors, comments
// included, to gRPC reflection, so `grpcurl describe` shows the
// documentation written in proto/.
//
// The descriptors protoc-gen-go embeds in gen/ carry no source info, hence no
// comments. jobboard.binpb is a FileDescriptorSet that `make generate` writes
// with buf, source info included; `make generate-check` fails when it is
// stale, like gen/.
package descriptors

import (
	_ "embed"
	"fmt"

	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

//go:embed jobboard.binpb
var fileDescriptorSet []byte

// files holds the API's files. The set is fixed at build time, so a set that
// does not parse is a build defect: failing at start is the honest answer,
// and the package's test catches it before that.
var files = mustFiles(fileDescriptorSet)

func mustFiles(b []byte) *protoregistry.Files {
	f, err := parse(b)
	if err != nil {
		panic(fmt.Sprintf("descriptors: embedded jobboard.binpb: %v", err))
	}
	return f
}

func parse(b []byte) (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("unmarshal: %w", err)
	}
	f, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("build registry: %w", err)
	}
	return f, nil
}

// Resolver finds a descriptor among the API's files, with their comments,
// and otherwise in the global registry, which holds what the API does not
// define: the health and reflection services and the well-known types.
func Resolver() protodesc.Resolver { return resolver{} }

type resolver struct{}

func (resolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if fd, err := files.FindFileByPath(path); err == nil {
		return fd, nil
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (resolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := files.FindDescriptorByName(name); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}

// RegisterReflection registers both reflection versions on srv, v1 and the
// v1alpha that many clients still ask for, answering from Resolver.
func RegisterReflection(srv reflection.GRPCServer) {
	v1 := reflection.NewServerV1(reflection.ServerOptions{Services: srv, DescriptorResolver: Resolver()})
	reflectionv1.RegisterServerReflectionServer(srv, v1)
	reflectionv1alpha.RegisterServerReflectionServer(srv,
		reflection.NewServer(reflection.ServerOptions{Services: srv, DescriptorResolver: Resolver()}))
}
