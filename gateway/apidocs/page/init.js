// Swagger UI over this server's own OpenAPI document. Calls made with
// "Try it out" go to the server that served the page, with the key pasted
// under "Authorize" (as the Basic user name, or as "Bearer KEY").
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  // Keys stay in the page; a reload forgets them.
  persistAuthorization: false,
  // The spec is served by this server: no need to ask a validator service.
  validatorUrl: null,
  displayRequestDuration: true,
  // The schemas show under each operation; the list of every message
  // (request wrappers included) would only add noise.
  defaultModelsExpandDepth: -1,
});
