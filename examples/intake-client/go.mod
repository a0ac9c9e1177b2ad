// A module of its own, as an internal service's would be: it requires the
// job board's module for the client package. The replace directive points
// at this checkout; a project outside it drops that line and requires a
// published version instead.
module github.com/truckjobs/jobboard/examples/intake-client

go 1.26.8

require (
	github.com/truckjobs/jobboard v0.0.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.32.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20261012220534-4341edf3f941 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261005182115-fad411399dd8 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/truckjobs/jobboard => ../..
