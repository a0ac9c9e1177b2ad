// Package jobboardclient connects the board's internal services (and any
// other Go program) to the job board's gRPC API: one call to Dial gives a
// connection with the transport, the credentials, the retries and the
// keepalive settings the board expects, and the generated clients of its
// services.
//
//	conn, err := jobboardclient.Dial(ctx, "jobboard.internal:9090", jobboardclient.Options{
//		CAFile:        "/etc/jobboard/ca.pem",
//		InternalToken: os.Getenv("JOBBOARD_INTERNAL_TOKEN"),
//	})
//	...
//	defer conn.Close()
//	ctx = jobboardclient.ActFor(ctx, accountID)
//	resp, err := conn.Intake.SubmitApplications(ctx, &jobboardv2.SubmitApplicationsRequest{Applications: apps})
//
// # Transport
//
// TLS by default, verifying the server against the system's roots or the
// certificates of Options.CAFile; with Options.CertFile and Options.KeyFile
// the client presents a certificate, which a server configured with
// JOBBOARD_INTERNAL_CLIENT_CA_FILE takes as an internal caller. Plaintext
// only when Options.Plaintext says so: for a local server, or one behind a
// proxy on the same host.
//
// # Credentials
//
// Either the internal token (Options.InternalToken) or an employer's API key
// (Options.APIKey), sent with every call as `authorization: Bearer ...`. A
// bearer token read off the network is as good as the caller's identity, so
// Dial refuses to send one over plaintext to anything but a loopback address
// or a Unix socket, unless Options.AllowTokenOverPlaintext is set.
//
// An internal caller acts for one account a call: ActFor names it in the
// call's x-account-id metadata. Every method but the DriverIntakeService's
// and the JobSearchService's needs it (InvalidArgument without); the intake
// takes the account from the request's account_id instead, and when both
// are given they must agree; the search reads every account's jobs, or
// those of its account_ids.
// With an API key the account is the key's, and x-account-id is ignored.
//
// # Retries
//
// A call that fails with UNAVAILABLE (the server could not be reached, was
// restarting, or closed the connection) is tried again, up to
// RetryPolicy.MaxAttempts attempts in all, after a backoff growing from
// RetryPolicy.InitialBackoff by RetryPolicy.BackoffMultiplier up to
// RetryPolicy.MaxBackoff (gRPC picks a random wait up to that backoff). No
// other code is retried: an error the server answered stays the answer.
// The policy is a gRPC service config, so grpc-go does the retrying, under
// each call's deadline. Retries are throttled per connection: while most of
// its calls fail (a long outage), grpc-go stops retrying until calls
// succeed again, so clients do not multiply the load on servers coming back.
//
// Only the methods that leave the board as one call would when repeated are
// retried: those whose (jobboard.v2.facts) option says retry_safe, read from
// the generated descriptors, so the protos decide and this list explains:
//
//   - reads: JobService.ListJobs and GetJob, DriverService.ListDrivers and
//     GetDriver, JobImportService.GetJobImport;
//   - JobService.PostJobs: jobs are keyed by reference number, so a post
//     sent twice leaves the same jobs (the second answer counts them as
//     unchanged);
//   - the deletes (JobService.DeleteJob, DeleteJobs, DeleteJobByReference,
//     DeleteJobsByReference): a job deleted twice is deleted (the second
//     answer may count it as missing);
//   - DriverIntakeService.SubmitApplication and SubmitApplications: a driver
//     is matched by e-mail and an account keeps the application sent last,
//     so the same applications sent again store nothing twice and answer the
//     same driver ids;
//   - JobImportService.CreateJobImport: the connection gives a call without
//     an idempotency-key one of its own, which every attempt of that call
//     carries, so a retry answers the import the first attempt created
//     rather than queueing a second one;
//   - WebhookService.ListWebhooks, GetWebhook, ListWebhookDeliveries,
//     EventService.ListEvents and JobSearchService.SearchJobs, which read;
//     WebhookService.UpdateWebhook, which sets the values it is given
//     (enabling an enabled endpoint changes nothing).
//
// These are not retried, and a caller who gets UNAVAILABLE from one looks
// (ListWebhooks, ListWebhookDeliveries) before calling again:
//
//   - WebhookService.CreateWebhook: a repeat adds a second endpoint, and
//     every event would be delivered twice;
//   - WebhookService.RotateWebhookSecret: a repeat replaces the secret the
//     first attempt made, and the secret before it stops signing at once;
//   - WebhookService.TestWebhook and RedeliverWebhookEvent: a repeat sends
//     the receiver one more delivery;
//   - WebhookService.DeleteWebhook: a repeat of a delete that went through
//     answers NOT_FOUND.
//
// # Keepalive
//
// While a call is in flight, the client pings a connection that has been
// silent for a minute and gives it up 20 seconds later without an answer,
// so a call to a server that vanished (a crashed host, a dropped NAT entry)
// fails over to a new connection rather than hang until its deadline. The
// board lets clients ping every 5 seconds or more seldom, and pings idle
// connections itself every 2 minutes. A grpc-go server with the default
// enforcement policy takes a ping every 5 minutes at most: against such a
// server, set Options.KeepaliveTime to 5 minutes or more. The board closes
// connections after JOBBOARD_GRPC_MAX_CONNECTION_AGE (5 minutes by default)
// in any case, and the client reconnects by itself.
package jobboardclient
