/* Measures libopenclaw-aec.so outside the node (the Debian 13 install test runs it in its root, on
 * that release's webrtc-audio-processing): argv[1] the library, argv[2] a recording (raw S16_LE
 * mono 48 kHz) played as the reply; its echo (60 ms at 0.5, a reflection at 67 ms at 0.2) is the
 * microphone. Prints the library's version and the echo return loss enhancement in dB after the
 * first 2 s (convergence). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: aec_erle LIB RAW48K\n"); return 2; }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    void *(*make)(int) = (void *(*)(int))dlsym(lib, "ocn_aec_new");
    int (*render)(void *, const float *) = (int (*)(void *, const float *))dlsym(lib, "ocn_aec_render");
    int (*capture)(void *, float *, int) = (int (*)(void *, float *, int))dlsym(lib, "ocn_aec_capture");
    const char *(*version)(void) = (const char *(*)(void))dlsym(lib, "ocn_aec_version");
    if (!make || !render || !capture || !version) { fprintf(stderr, "missing symbols\n"); return 1; }
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END); long n = ftell(f) / 2; fseek(f, 0, SEEK_SET);
    short *far = malloc(n * sizeof *far);
    if (fread(far, 2, n, f) != (size_t)n) { fprintf(stderr, "short read\n"); return 1; }
    fclose(f);
    const int rate = 48000, frame = 480, d1 = rate * 60 / 1000, d2 = rate * 67 / 1000;
    float *mic = calloc(n, sizeof *mic);
    for (long i = 0; i < n; i++) {
        if (i + d1 < n) mic[i + d1] += 0.5f * far[i] / 32768.0f;
        if (i + d2 < n) mic[i + d2] += 0.2f * far[i] / 32768.0f;
    }
    void *aec = make(rate);
    if (!aec) { fprintf(stderr, "ocn_aec_new failed\n"); return 1; }
    double in = 0, out = 0;
    float ref[480], buf[480];
    for (long s = 0; s + frame <= n; s += frame) {
        for (int i = 0; i < frame; i++) { ref[i] = far[s + i] / 32768.0f; buf[i] = mic[s + i]; }
        render(aec, ref);
        capture(aec, buf, 140);
        if (s >= 2 * rate) for (int i = 0; i < frame; i++) { in += (double)mic[s + i] * mic[s + i]; out += (double)buf[i] * buf[i]; }
    }
    printf("%s\nERLE %.1f\n", version(), 10 * log10(in / (out > 0 ? out : 1e-12)));
    return 0;
}
