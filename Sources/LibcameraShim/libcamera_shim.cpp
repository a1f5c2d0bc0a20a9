// libopenclaw-libcamera.so (see libcamera_shim.h). Written against libcamera's stable core
// (CameraManager, Camera, Request, FrameBuffer, controls), which compiles from 0.4 (Debian 13) to
// 0.7 (Raspberry Pi OS). Why C++ and not Swift: libcamera's Camera and CameraManager cannot be
// copied or moved and its Signal takes callables, which Swift's C++ interop does not import.
#include "libcamera_shim.h"

#include <libcamera/libcamera.h>
#include <libcamera/version.h>

#include <sys/mman.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

using namespace libcamera;

namespace {

char *dup(const std::string &s) { return strdup(s.c_str()); }

void fail(char **error, const std::string &what) {
    if (error) *error = dup(what);
}

std::string json(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') { out += '\\'; out += c; }
        else if (static_cast<unsigned char>(c) < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); out += b; }
        else out += c;
    }
    return out + "\"";
}

int64_t monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Mapping { uint8_t *base; size_t length; };

struct Session {
    std::unique_ptr<CameraManager> manager;
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<std::unique_ptr<Request>> requests;
    Stream *stream = nullptr;
    bool acquired = false, started = false;
    int width = 0, height = 0, stride = 0;
    std::map<int, Mapping> maps;  // dma-buf fd -> its mapping
    std::mutex lock;
    std::condition_variable cond;
    std::deque<Request *> completed;
    std::vector<uint8_t> frame;

    void requestComplete(Request *r) {
        if (r->status() == Request::RequestCancelled) return;
        {
            std::lock_guard<std::mutex> g(lock);
            completed.push_back(r);
        }
        cond.notify_one();
    }

    // The bytes of one plane, mapping its dma-buf once.
    const uint8_t *plane(const FrameBuffer::Plane &p) {
        int fd = p.fd.get();
        auto it = maps.find(fd);
        if (it == maps.end()) {
            size_t len = lseek(fd, 0, SEEK_END);
            if (len == size_t(-1) || len == 0) len = p.offset + p.length;
            void *m = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED) return nullptr;
            it = maps.emplace(fd, Mapping{static_cast<uint8_t *>(m), len}).first;
        }
        if (p.offset + p.length > it->second.length) return nullptr;
        return it->second.base + p.offset;
    }

    ~Session() {
        if (started) camera->stop();
        if (camera) camera->requestCompleted.disconnect(this);
        requests.clear();
        if (allocator && stream) allocator->free(stream);
        allocator.reset();
        for (auto &m : maps) munmap(m.second.base, m.second.length);
        config.reset();
        if (acquired) camera->release();
        camera.reset();
        if (manager) manager->stop();
    }
};

const char *locationName(int32_t l) {
    switch (l) {
    case properties::CameraLocationFront: return "front";
    case properties::CameraLocationBack: return "back";
    case properties::CameraLocationExternal: return "external";
    default: return "unknown";
    }
}

}  // namespace

extern "C" char *ocl_list(char **error) {
    auto manager = std::make_unique<CameraManager>();
    int rc = manager->start();
    if (rc < 0) { fail(error, std::string("the libcamera camera manager did not start: ") + strerror(-rc)); return nullptr; }
    std::ostringstream out;
    out << "[";
    bool first = true;
    for (const auto &cam : manager->cameras()) {
        const ControlList &props = cam->properties();
        std::string model = cam->id();
        if (auto m = props.get(properties::Model)) model = std::string(*m);
        int32_t location = -1;
        if (auto l = props.get(properties::Location)) location = *l;
        Size size;
        if (auto s = props.get(properties::PixelArraySize)) size = *s;
        out << (first ? "" : ",") << "{\"id\":" << json(cam->id()) << ",\"model\":" << json(model)
            << ",\"location\":\"" << locationName(location) << "\",\"width\":" << size.width << ",\"height\":" << size.height << "}";
        first = false;
    }
    out << "]";
    manager->stop();
    return dup(out.str());
}

extern "C" void *ocl_open(const char *id, int width, int height, int video, char **error) {
    auto s = std::make_unique<Session>();
    s->manager = std::make_unique<CameraManager>();
    int rc = s->manager->start();
    if (rc < 0) { s->manager.reset(); fail(error, std::string("the libcamera camera manager did not start: ") + strerror(-rc)); return nullptr; }
    s->camera = s->manager->get(std::string(id));
    if (!s->camera) { fail(error, std::string("no camera ") + id); return nullptr; }
    if (s->camera->acquire() < 0) { fail(error, "busy: another process holds the camera"); return nullptr; }
    s->acquired = true;
    s->config = s->camera->generateConfiguration({video ? StreamRole::VideoRecording : StreamRole::StillCapture});
    if (!s->config || s->config->empty()) { fail(error, "the camera offers no configuration for this use"); return nullptr; }
    StreamConfiguration &cfg = s->config->at(0);
    cfg.pixelFormat = formats::NV12;
    if (width > 0 && height > 0) cfg.size = Size(width, height);
    cfg.bufferCount = video ? 4 : 1;
    if (s->config->validate() == CameraConfiguration::Invalid) { fail(error, "the camera refused an NV12 configuration"); return nullptr; }
    if (cfg.pixelFormat != formats::NV12) { fail(error, "the camera cannot give NV12 frames (" + cfg.pixelFormat.toString() + ")"); return nullptr; }
    if ((rc = s->camera->configure(s->config.get())) < 0) { fail(error, std::string("configure: ") + strerror(-rc)); return nullptr; }
    s->stream = cfg.stream();
    s->width = int(cfg.size.width);
    s->height = int(cfg.size.height);
    s->stride = int(cfg.stride ? cfg.stride : cfg.size.width);
    s->allocator = std::make_unique<FrameBufferAllocator>(s->camera);
    if ((rc = s->allocator->allocate(s->stream)) < 0) {
        fail(error, std::string("cannot allocate frame buffers (no dma-buf provider?): ") + strerror(-rc));
        return nullptr;
    }
    for (const auto &buffer : s->allocator->buffers(s->stream)) {
        std::unique_ptr<Request> r = s->camera->createRequest();
        if (!r || r->addBuffer(s->stream, buffer.get()) < 0) { fail(error, "cannot create a capture request"); return nullptr; }
        // Autofocus where the module has it (Camera Module 3): continuous while it streams.
        if (s->camera->controls().count(&controls::AfMode)) r->controls().set(controls::AfMode, controls::AfModeContinuous);
        s->requests.push_back(std::move(r));
    }
    s->camera->requestCompleted.connect(s.get(), &Session::requestComplete);
    if ((rc = s->camera->start()) < 0) { fail(error, std::string("start: ") + strerror(-rc)); return nullptr; }
    s->started = true;
    for (auto &r : s->requests) {
        if ((rc = s->camera->queueRequest(r.get())) < 0) { fail(error, std::string("queue: ") + strerror(-rc)); return nullptr; }
    }
    return s.release();
}

extern "C" void ocl_format(void *handle, int *width, int *height, int *stride) {
    auto *s = static_cast<Session *>(handle);
    *width = s->width; *height = s->height; *stride = s->stride;
}

extern "C" int ocl_frame(void *handle, int timeout_ms, const uint8_t **data, size_t *length, int64_t *timestamp_ns, char **error) {
    auto *s = static_cast<Session *>(handle);
    Request *r = nullptr;
    {
        std::unique_lock<std::mutex> g(s->lock);
        if (!s->cond.wait_for(g, std::chrono::milliseconds(timeout_ms), [&] { return !s->completed.empty(); })) {
            fail(error, "no frame from the camera within " + std::to_string(timeout_ms) + " ms");
            return -1;
        }
        r = s->completed.front();
        s->completed.pop_front();
    }
    int64_t at = monotonicNs();
    FrameBuffer *buffer = r->findBuffer(s->stream);
    if (r->status() != Request::RequestComplete || !buffer || buffer->planes().empty()) {
        fail(error, "the camera returned a failed frame");
        return -1;
    }
    // NV12: the Y plane, then the interleaved UV plane of half the lines. libcamera 0.4's virtual
    // camera reports bytesused 0 and a third plane: lengths come from the format, not metadata.
    size_t ySize = size_t(s->stride) * s->height, uvSize = ySize / 2;
    s->frame.resize(ySize + uvSize);
    const auto &planes = buffer->planes();
    const uint8_t *y = s->plane(planes[0]);
    const uint8_t *uv = nullptr;
    if (planes.size() > 1 && (planes[1].fd.get() != planes[0].fd.get() || planes[1].offset != planes[0].offset)) uv = s->plane(planes[1]);
    else if (y && planes[0].length >= ySize + uvSize) uv = y + ySize;
    if (!y || !uv || planes[0].length < ySize) { fail(error, "cannot read the frame's memory"); return -1; }
    memcpy(s->frame.data(), y, ySize);
    memcpy(s->frame.data() + ySize, uv, uvSize);
    // The buffer goes back for the next frame.
    r->reuse(Request::ReuseBuffers);
    if (s->camera->controls().count(&controls::AfMode)) r->controls().set(controls::AfMode, controls::AfModeContinuous);
    s->camera->queueRequest(r);
    *data = s->frame.data();
    *length = s->frame.size();
    *timestamp_ns = at;
    return 0;
}

extern "C" void ocl_close(void *handle) { delete static_cast<Session *>(handle); }

extern "C" void ocl_free(void *p) { free(p); }

#define OCL_STR2(x) #x
#define OCL_STR(x) OCL_STR2(x)
extern "C" const char *ocl_version(void) {
    return OCL_STR(LIBCAMERA_VERSION_MAJOR) "." OCL_STR(LIBCAMERA_VERSION_MINOR) "." OCL_STR(LIBCAMERA_VERSION_PATCH);
}
