//===- HttpServer.cpp -----------------------------------------------------===//

#include "serve/HttpServer.h"

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <thread>

namespace cohere2c::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

/// Server-sent events over a chunked response on a connection's socket.
class ChunkedEvents : public StreamWriter {
public:
  explicit ChunkedEvents(tcp::socket &socket) : socket_(socket) {}

  bool start() override {
    http::response<http::empty_body> head{http::status::ok, 11};
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    head.chunked(true);
    http::response_serializer<http::empty_body> serializer{head};
    beast::error_code ec;
    http::write_header(socket_, serializer, ec);
    return ok_ = !ec;
  }

  bool sendEvent(const std::string &data) override {
    if (!ok_)
      return false;
    std::string event = "data: " + data + "\n\n";
    beast::error_code ec;
    asio::write(socket_, http::make_chunk(asio::buffer(event)), ec);
    return ok_ = !ec;
  }

  void finish() override {
    beast::error_code ec;
    if (ok_)
      asio::write(socket_, http::make_chunk_last(), ec);
  }

  bool clientGone() override {
    pollfd fd{socket_.native_handle(), POLLIN | POLLRDHUP, 0};
    if (poll(&fd, 1, 0) <= 0)
      return false;
    if (fd.revents & (POLLRDHUP | POLLHUP | POLLERR))
      return true;
    char byte;
    return recv(fd.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }

private:
  tcp::socket &socket_;
  bool ok_ = true;
};

http::response<http::string_body> toBeast(const HttpResponse &r,
                                          bool keepAlive) {
  http::response<http::string_body> out{static_cast<http::status>(r.status),
                                        11};
  out.set(http::field::server, "cohere2c-serve");
  out.set(http::field::content_type, r.contentType);
  for (const auto &[name, value] : r.headers)
    out.set(name, value);
  out.body() = r.body;
  out.keep_alive(keepAlive);
  out.prepare_payload();
  return out;
}

} // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  Api &api;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::mutex mutex;
  std::condition_variable closed;
  int64_t connections = 0;
  /// Sockets of live connections: since when each waits for its next
  /// request (idle; reading it counts too), or nothing while it is served;
  /// under `mutex`.
  std::map<int, std::optional<std::chrono::steady_clock::time_point>> idle;
  std::atomic<bool> stopping{false};
  /// Closes connections idle past idleTimeout. SO_RCVTIMEO cannot: Asio's
  /// blocking read waits again when the socket times out.
  std::thread reaper;

  Impl(const HttpServerOptions &options, Api &api)
      : options(options), api(api), reaper([this] { reapIdle(); }) {}
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    closed.notify_all();
    reaper.join();
  }
  void reapIdle();

  void serve(tcp::socket socket);
  /// One request of a connection; false when the connection should close.
  bool exchange(tcp::socket &socket, beast::flat_buffer &buffer);
  /// Marks the connection idle (waiting for a request) or busy; false when
  /// it should close instead of waiting (the server stops).
  bool setIdle(int fd, bool isIdle);
};

void HttpServer::Impl::reapIdle() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    closed.wait_for(lock, std::chrono::seconds(1));
    auto now = std::chrono::steady_clock::now();
    for (auto &[fd, since] : idle)
      if (since && now - *since > options.idleTimeout) {
        ::shutdown(fd, SHUT_RDWR); // its blocking read returns
        since.reset();
      }
  }
}

void HttpServer::Impl::serve(tcp::socket socket) {
  // A client that stops reading a response is dropped after idleTimeout
  // (a blocking write does give up on SO_SNDTIMEO: it ends the stream).
  timeval timeout{(time_t)options.idleTimeout.count(), 0};
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout,
             sizeof timeout);
  socket.set_option(tcp::no_delay(true));
  beast::flat_buffer buffer;
  int fd = socket.native_handle();
  while (setIdle(fd, true) && exchange(socket, buffer)) {
  }
  beast::error_code ec;
  socket.shutdown(tcp::socket::shutdown_both, ec);
  std::lock_guard<std::mutex> lock(mutex);
  idle.erase(fd);
  --connections;
  closed.notify_all();
}

bool HttpServer::Impl::setIdle(int fd, bool isIdle) {
  std::lock_guard<std::mutex> lock(mutex);
  if (isIdle)
    idle[fd] = std::chrono::steady_clock::now();
  else
    idle[fd].reset();
  return !(isIdle && stopping);
}

bool HttpServer::Impl::exchange(tcp::socket &socket,
                                beast::flat_buffer &buffer) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(options.maxBodyBytes);
  parser.header_limit(64 * 1024);
  beast::error_code ec;
  http::read_header(socket, buffer, parser, ec);
  auto reply = [&](const HttpResponse &r, bool keepAlive) {
    beast::error_code written;
    http::write(socket, toBeast(r, keepAlive), written);
    return keepAlive && !written;
  };
  if (!ec) {
    // A body in a transfer coding other than chunked cannot be read (RFC
    // 9112 6.1: 501); a client that waits for "100 Continue" before its
    // body gets it (curl does for bodies over 1 MiB, for a second).
    const auto &head = parser.get();
    if (head.count(http::field::transfer_encoding) && !parser.chunked())
      return reply(Api::errorResponse(
                       {501, "the transfer coding " +
                                 std::string(head[http::field::transfer_encoding]) +
                                 " is not supported (only chunked)"}),
                   false);
    if (beast::iequals(head[http::field::expect], "100-continue")) {
      http::response<http::empty_body> go{http::status::continue_, head.version()};
      http::write(socket, go, ec);
    }
    if (!ec)
      http::read(socket, buffer, parser, ec);
  }
  // Served from here: until the body is whole the idle clock runs, so that
  // a client that stops partway through its body is closed too.
  setIdle(socket.native_handle(), false);
  if (ec == http::error::body_limit)
    return reply(
        Api::errorResponse({413, "the body is larger than " +
                                     std::to_string(options.maxBodyBytes) +
                                     " bytes"}),
        false);
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::connection_reset || ec == asio::error::would_block ||
      ec == asio::error::try_again || ec == asio::error::timed_out)
    return false;
  if (ec)
    return reply(
        Api::errorResponse({400, "a malformed HTTP request: " + ec.message()}),
        false);

  const auto &message = parser.get();
  HttpRequest request;
  request.method = std::string(message.method_string());
  std::string target(message.target());
  request.path = target.substr(0, target.find('?'));
  request.authorization = std::string(message[http::field::authorization]);
  request.body = message.body();
  ChunkedEvents events(socket);
  HttpResponse response;
  try {
    response = api.handle(request, events);
  } catch (const std::exception &e) {
    response =
        Api::errorResponse({500, std::string("internal error: ") + e.what()});
  }
  if (response.streamed)
    return false; // a chunked stream ends its connection's requests
  return reply(response, message.keep_alive() && !stopping);
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() { stopAccepting(); }

StatusOr<std::unique_ptr<HttpServer>>
HttpServer::listen(const HttpServerOptions &options, Api &api) {
  auto impl = std::make_unique<Impl>(options, api);
  beast::error_code ec;
  asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (ec)
    return Status::error("--host " + options.host + ": not an IP address (" +
                         ec.message() + ")");
  tcp::endpoint endpoint{address, options.port};
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec)
    impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec)
    impl->acceptor.bind(endpoint, ec);
  if (!ec)
    impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Status::error("cannot listen on " + options.host + ":" +
                         std::to_string(options.port) + ": " + ec.message());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const {
  return impl_->acceptor.local_endpoint().port();
}

void HttpServer::run() {
  for (;;) {
    beast::error_code ec;
    tcp::socket socket{impl_->io};
    impl_->acceptor.accept(socket, ec);
    if (impl_->stopping) {
      impl_->acceptor.close(ec);
      return;
    }
    if (ec)
      continue;
    bool full;
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      full = impl_->connections >= impl_->options.maxConnections;
      if (!full)
        ++impl_->connections;
    }
    if (full) {
      beast::error_code ignored;
      http::write(
          socket,
          toBeast(Api::errorResponse({503, "too many connections"}), false),
          ignored);
      continue;
    }
    std::thread([impl = impl_.get(), s = std::move(socket)]() mutable {
      impl->serve(std::move(s));
    }).detach();
  }
}

void HttpServer::stopAccepting() {
  // shutdown() wakes the thread blocked in accept(), which then closes the
  // acceptor (Asio objects are not for two threads at once); idle
  // keep-alive connections are woken the same way and close, busy ones
  // close after their response.
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->stopping = true;
  if (impl_->acceptor.is_open())
    ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  for (auto &[fd, since] : impl_->idle)
    if (since)
      ::shutdown(fd, SHUT_RDWR);
}

bool HttpServer::waitForConnections(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  return impl_->closed.wait_for(lock, timeout,
                                [&] { return impl_->connections == 0; });
}

} // namespace cohere2c::serve
