#pragma once

#include "protocol/close_code.hpp"
#include "protocol/shared_frame.hpp"

#include <functional>
#include <string_view>

namespace parley::rooms {

// The outbound side of one connection, implemented by server/. The chat logic never sees a socket.
// Thread: called only on the worker thread that owns the connection.
class session_output {
public:
    virtual ~session_output() = default;
    // Queues a complete frame; the bytes are shared, never copied. A connection over its queue
    // bound drops the frame and is closed later from its own task: send() never calls back into
    // the chat logic, so callers may send while walking member lists.
    virtual void send(const protocol::shared_frame& frame) = 0;
    // Sends a close frame after what is queued and ends the connection.
    virtual void close(protocol::close_code code, std::string_view reason) = 0;
};

// Runs tasks on one worker's thread, in the order posted. Implemented by server/ over the
// worker's io_context; tests implement it with a plain queue.
// Thread: post() may be called from any thread.
class worker_executor {
public:
    virtual ~worker_executor() = default;
    virtual void post(std::function<void()> task) = 0;
};

}  // namespace parley::rooms
