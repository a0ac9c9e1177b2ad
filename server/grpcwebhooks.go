package server

import (
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// grpcWebhooks serves jobboard.v2.WebhookService over the core the REST
// gateway calls, converting to and from the natural types.
type grpcWebhooks struct {
	jobboardv2.UnimplementedWebhookServiceServer
	core *WebhookService
}

// grpcEvents serves jobboard.v2.EventService over the core the REST
// gateway calls.
type grpcEvents struct {
	jobboardv2.UnimplementedEventServiceServer
	core *EventService
}
