// Package domain holds the business's own types and the rules that belong
// to them, apart from any wire form or table: the REST and gRPC adapters
// translate into and out of them, the store keeps them. It imports nothing
// of the project, so every other package may import it.
package domain
