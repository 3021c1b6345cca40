window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "{{ url_for('api-docs.openapi_json') }}",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null
  });
});
