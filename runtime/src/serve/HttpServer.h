//===- HttpServer.h - HTTP/1.1 transport of cohere2c-serve ----------------===//
//
// Boost.Beast over Asio (header-only, so the binary still needs only libc,
// libstdc++ and libdl): one acceptor thread, and one thread per connection
// reading requests (keep-alive), handing them to the Api and writing its
// responses; server-sent events go out with chunked transfer encoding. A
// thread per connection keeps a streaming response's code straight-line;
// the engine, not HTTP, bounds the work in flight. Limits: request bodies
// over maxBodyBytes get 413; a connection that has not delivered a whole
// request idleTimeout after opening or after its last response is closed
// (slow or silent clients cannot hold connections); connections past
// maxConnections get 503.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_HTTPSERVER_H
#define COHERE2C_SERVE_HTTPSERVER_H

#include "Support/Status.h"
#include "cohere2c/serve.h"
#include "serve/Api.h"

#include <chrono>
#include <memory>
#include <string>

namespace cohere2c::serve {

// HttpServerOptions is part of the public cohere2c/serve.h.

class HttpServer {
public:
  /// Binds and listens. Errors: a host that does not resolve, a port in use.
  static StatusOr<std::unique_ptr<HttpServer>>
  listen(const HttpServerOptions &options, Api &api);
  ~HttpServer();
  uint16_t port() const;
  /// Accepts connections until stopAccepting(); returns then.
  void run();
  /// Closes the listening socket (from any thread); connections in flight
  /// go on.
  void stopAccepting();
  /// Waits up to `timeout` for every connection to close; whether they did.
  bool waitForConnections(std::chrono::milliseconds timeout);

  struct Impl;

private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_HTTPSERVER_H
