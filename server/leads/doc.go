// Package leads is the account's lead events: the outbox that writes them
// in the transaction of what they report, the feed that reads them, the
// webhook endpoints that subscribe to them and the queue's workers that
// deliver them (each account and endpoint to its share of the workers)
// and remove them past their retention (docs/api.md, Events and webhooks).
package leads
