// libopenclaw-aec.so (see echo_canceller_shim.h). One source for both APIs: Debian 12's
// webrtc-audio-processing 0.3 (AEC with the extended filter and delay-agnostic mode, set up
// through webrtc::Config) and Debian 13's 1.x (AEC3 through AudioProcessing::Config), selected
// by OCN_WEBRTC_APM_1, which scripts/build defines from pkg-config.
#include "echo_canceller_shim.h"

#ifdef OCN_WEBRTC_APM_1
#include <modules/audio_processing/include/audio_processing.h>
#else
#include <webrtc/modules/audio_processing/include/audio_processing.h>
#endif

#include <memory>

namespace {
struct Canceller {
    int rate;
#ifdef OCN_WEBRTC_APM_1
    rtc::scoped_refptr<webrtc::AudioProcessing> apm;
#else
    std::unique_ptr<webrtc::AudioProcessing> apm;
#endif
};
}  // namespace

extern "C" void *ocn_aec_new(int rate) {
    if (rate != 8000 && rate != 16000 && rate != 32000 && rate != 48000) return nullptr;
    auto c = new Canceller{rate, {}};
#ifdef OCN_WEBRTC_APM_1
    c->apm = webrtc::AudioProcessingBuilder().Create();
    if (!c->apm) { delete c; return nullptr; }
    webrtc::AudioProcessing::Config config;
    config.echo_canceller.enabled = true;
    config.echo_canceller.mobile_mode = false;
    config.high_pass_filter.enabled = true;
    config.noise_suppression.enabled = true;
    c->apm->ApplyConfig(config);
#else
    webrtc::Config config;
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
    c->apm.reset(webrtc::AudioProcessing::Create(config));
    if (!c->apm) { delete c; return nullptr; }
    c->apm->echo_cancellation()->enable_drift_compensation(false);
    c->apm->echo_cancellation()->set_suppression_level(webrtc::EchoCancellation::kHighSuppression);
    c->apm->echo_cancellation()->Enable(true);
    c->apm->high_pass_filter()->Enable(true);
    c->apm->noise_suppression()->set_level(webrtc::NoiseSuppression::kModerate);
    c->apm->noise_suppression()->Enable(true);
#endif
    return c;
}

extern "C" int ocn_aec_render(void *aec, const float *frame) {
    auto c = static_cast<Canceller *>(aec);
    webrtc::StreamConfig config(c->rate, 1);
    const float *src[1] = {frame};
    float out[480];
    float *dst[1] = {out};
    return c->apm->ProcessReverseStream(src, config, config, dst);
}

extern "C" int ocn_aec_capture(void *aec, float *frame, int delay_ms) {
    auto c = static_cast<Canceller *>(aec);
    webrtc::StreamConfig config(c->rate, 1);
    c->apm->set_stream_delay_ms(delay_ms);
    const float *src[1] = {frame};
    float *dst[1] = {frame};
    return c->apm->ProcessStream(src, config, config, dst);
}

extern "C" void ocn_aec_free(void *aec) { delete static_cast<Canceller *>(aec); }

extern "C" const char *ocn_aec_version(void) {
#ifdef OCN_WEBRTC_APM_1
    return "webrtc-audio-processing 1.x (AEC3)";
#else
    return "webrtc-audio-processing 0.3 (AEC, delay-agnostic)";
#endif
}
