// Package decode reads the REST API's request bodies (jobs to post, ids and
// reference numbers to delete, an import, a webhook endpoint) into its
// messages, in JSON and in XML, as leniently as employers' scripts write
// them: numbers and booleans as text, a list as one value, unknown fields
// kept in order to be echoed as ignored, a member named twice noted. Its
// refusals name the field, the value and the rule in the API's words. It
// knows nothing of HTTP, routes or the services.
package decode
