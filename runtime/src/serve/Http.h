//===- Http.h - The server's HTTP exchange, apart from the transport -----===//
//
// What the API (Api.h) sees of HTTP: a request, a response, and for
// server-sent events a stream writer. The transport (HttpServer.cpp,
// Boost.Beast) fills and writes them.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_HTTP_H
#define COHERE2C_SERVE_HTTP_H

#include <string>
#include <utility>
#include <vector>

namespace cohere2c::serve {

struct HttpRequest {
  std::string method; // "GET", "POST", ...
  std::string path;   // the target without its query
  std::string authorization;
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string contentType = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  /// The body went out as server-sent events (StreamWriter); nothing more
  /// to write.
  bool streamed = false;
};

/// A response of server-sent events (text/event-stream), written as it is
/// produced. Each call returns false once the client is gone.
class StreamWriter {
public:
  virtual ~StreamWriter() = default;
  /// Sends the status line and headers.
  virtual bool start() = 0;
  /// Sends `data: <data>\n\n`.
  virtual bool sendEvent(const std::string &data) = 0;
  /// Ends the stream.
  virtual void finish() = 0;
  /// Whether the client hung up (checked without blocking).
  virtual bool clientGone() = 0;
};

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_HTTP_H
