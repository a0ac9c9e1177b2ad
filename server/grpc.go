package server

import (
	"context"
	"strings"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	jobboardv2 "jobboard/gen/jobboard/v2"
	"jobboard/server/store"
)

// Services are the implementations behind both the gRPC server and the
// in-process REST gateway.
type Services struct {
	Auth    *Authenticator
	Jobs    *JobService
	Drivers *DriverService
	Intake  *DriverIntakeService
	Health  *health.Server
}

// Config is what the services need from the outside.
type Config struct {
	InternalToken string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewServices wires the services over st.
func NewServices(st *store.Store, cfg Config) *Services {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Services{
		Auth:    NewAuthenticator(st, cfg.InternalToken),
		Jobs:    NewJobService(st, now),
		Drivers: NewDriverService(st),
		Intake:  NewDriverIntakeService(st),
		Health:  health.NewServer(),
	}
}

// NewGRPCServer returns a gRPC server with every service, health and
// reflection registered. Interceptors run outermost first: panics become
// Internal, every error gets a code, then the caller is authenticated
// (health and reflection are open, as probes and grpcurl expect).
func (s *Services) NewGRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	srv := grpc.NewServer(append(opts,
		grpc.ChainUnaryInterceptor(
			recoveryInterceptor(),
			statusBoundary,
			selector.UnaryServerInterceptor(auth.UnaryServerInterceptor(s.Auth.AuthenticateGRPC), needsAuth),
		),
		grpc.ChainStreamInterceptor(
			selector.StreamServerInterceptor(auth.StreamServerInterceptor(s.Auth.AuthenticateGRPC), needsAuth),
		),
	)...)
	jobboardv2.RegisterJobServiceServer(srv, s.Jobs)
	jobboardv2.RegisterDriverServiceServer(srv, s.Drivers)
	jobboardv2.RegisterDriverIntakeServiceServer(srv, s.Intake)
	healthpb.RegisterHealthServer(srv, s.Health)
	reflection.Register(srv)
	return srv
}

// needsAuth exempts health checks and reflection from authentication.
var needsAuth = selector.MatchFunc(func(_ context.Context, c interceptors.CallMeta) bool {
	return !strings.HasPrefix(c.FullMethod(), "/grpc.health.v1.") && !strings.HasPrefix(c.FullMethod(), "/grpc.reflection.")
})
