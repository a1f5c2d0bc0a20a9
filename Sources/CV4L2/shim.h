// Video4Linux2 UAPI (linux/videodev2.h, from linux-libc-dev). ioctl is variadic and the VIDIOC_*
// requests are _IOR/_IOWR macros Swift cannot import, so Swift calls these typed wrappers. Each
// returns ioctl's result (-1 with errno set on failure). Plain ioctl(2) on purpose: libv4l2 would
// go through syscall() and bypass the LD_PRELOAD test fake.
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/ioctl.h>

static inline int cv4l2_ioctl(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

static inline int cv4l2_querycap(int fd, struct v4l2_capability *c) { return ioctl(fd, VIDIOC_QUERYCAP, c); }
static inline int cv4l2_enum_fmt(int fd, struct v4l2_fmtdesc *f) { return ioctl(fd, VIDIOC_ENUM_FMT, f); }
static inline int cv4l2_enum_framesizes(int fd, struct v4l2_frmsizeenum *s) { return ioctl(fd, VIDIOC_ENUM_FRAMESIZES, s); }
static inline int cv4l2_g_fmt(int fd, struct v4l2_format *f) { return ioctl(fd, VIDIOC_G_FMT, f); }
static inline int cv4l2_s_fmt(int fd, struct v4l2_format *f) { return ioctl(fd, VIDIOC_S_FMT, f); }
static inline int cv4l2_reqbufs(int fd, struct v4l2_requestbuffers *r) { return ioctl(fd, VIDIOC_REQBUFS, r); }
static inline int cv4l2_querybuf(int fd, struct v4l2_buffer *b) { return ioctl(fd, VIDIOC_QUERYBUF, b); }
static inline int cv4l2_qbuf(int fd, struct v4l2_buffer *b) { return ioctl(fd, VIDIOC_QBUF, b); }
static inline int cv4l2_dqbuf(int fd, struct v4l2_buffer *b) { return ioctl(fd, VIDIOC_DQBUF, b); }
static inline int cv4l2_streamon(int fd) { int t = V4L2_BUF_TYPE_VIDEO_CAPTURE; return ioctl(fd, VIDIOC_STREAMON, &t); }
static inline int cv4l2_streamoff(int fd) { int t = V4L2_BUF_TYPE_VIDEO_CAPTURE; return ioctl(fd, VIDIOC_STREAMOFF, &t); }
static inline int cv4l2_queryctrl(int fd, struct v4l2_queryctrl *q) { return ioctl(fd, VIDIOC_QUERYCTRL, q); }
static inline int cv4l2_g_ctrl(int fd, struct v4l2_control *c) { return ioctl(fd, VIDIOC_G_CTRL, c); }

// Constants Swift imports awkwardly (macros built from v4l2_fourcc or needing casts).
static inline unsigned int cv4l2_fourcc_yuyv(void) { return V4L2_PIX_FMT_YUYV; }
static inline unsigned int cv4l2_fourcc_nv12(void) { return V4L2_PIX_FMT_NV12; }
static inline unsigned int cv4l2_fourcc_mjpeg(void) { return V4L2_PIX_FMT_MJPEG; }
static inline unsigned int cv4l2_fourcc_jpeg(void) { return V4L2_PIX_FMT_JPEG; }

// The controls of a camera's own adjustments that settle over its first frames after STREAMON.
static inline unsigned int cv4l2_cid_exposure_auto(void) { return V4L2_CID_EXPOSURE_AUTO; }
static inline unsigned int cv4l2_cid_autogain(void) { return V4L2_CID_AUTOGAIN; }
static inline unsigned int cv4l2_cid_auto_white_balance(void) { return V4L2_CID_AUTO_WHITE_BALANCE; }
static inline int cv4l2_exposure_manual(void) { return V4L2_EXPOSURE_MANUAL; }
