// Package auth turns credentials into a call.Caller: API keys (remembered
// while the key watch runs, wrong ones limited per client address), the
// internal token and internal services' client certificates, and each
// account's request rate.
package auth
