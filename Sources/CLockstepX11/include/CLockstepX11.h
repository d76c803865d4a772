#ifndef LOCKSTEP_X11_H
#define LOCKSTEP_X11_H
#include <stddef.h>

/// A rectangle in X screen pixels.
typedef struct {
    int x, y, width, height;
} lockstep_x11_rect;

/// One RandR monitor (`xrandr --listmonitors`).
typedef struct {
    char name[64];
    lockstep_x11_rect rect;
    int primary;
} lockstep_x11_monitor;

/// A RandR mode: the output showing it, its size and refresh rate (millihertz).
typedef struct {
    char output[64];
    int width, height;
    long refresh_mhz;
} lockstep_x11_mode;

/// The mode of the CRTC that shows the point (`x`, `y`) of `display`'s screen (NULL: $DISPLAY).
/// 0, or -1 with a message in `error` when the display cannot be opened or no CRTC shows it.
int lockstep_x11_mode_at(const char *display, int x, int y, lockstep_x11_mode *mode, char *error, size_t error_size);

/// A window the node owns on an X display, handed to a GStreamer video-overlay sink.
typedef struct lockstep_x11_window lockstep_x11_window;

/// The monitors of `display` (NULL: $DISPLAY), at most `capacity`; their number, or -1 with a
/// message in `error` when the display cannot be opened.
int lockstep_x11_monitors(const char *display, lockstep_x11_monitor *monitors, int capacity, char *error, size_t error_size);

/// Opens `display` and maps a borderless, black window with a hidden cursor at `rect` (screen
/// coordinates), titled `title`. With `fullscreen`, it asks the window manager to keep it
/// fullscreen on monitor `monitor_index` (the order lockstep_x11_monitors gives; -1: none), above
/// panels. Waits up to `map_timeout_ms` for the window to be mapped. NULL with a message in `error`
/// when the display cannot be opened.
lockstep_x11_window *lockstep_x11_window_open(
    const char *display, const char *title, lockstep_x11_rect rect, int fullscreen, int monitor_index,
    int map_timeout_ms, char *error, size_t error_size);

/// The X window id (for gst_video_overlay_set_window_handle).
unsigned long lockstep_x11_window_id(lockstep_x11_window *window);

/// Where the window is now, in screen coordinates, and whether it is mapped (viewable).
lockstep_x11_rect lockstep_x11_window_geometry(lockstep_x11_window *window, int *viewable);

/// Paints the window black (between shows).
void lockstep_x11_window_clear(lockstep_x11_window *window);

/// Handles the window's events for up to `timeout_ms`: a close request from the window manager is
/// refused (a wall window stays), an expose repaints black where no video is. 0, or -1 when the
/// display connection is gone.
int lockstep_x11_window_pump(lockstep_x11_window *window, int timeout_ms);

/// X errors of one kind that were ignored (the process's Xlib error handler, installed with the
/// first window: Xlib's default one would end the process).
typedef struct {
    int code, request, minor;
    unsigned long count;
    char text[96];
} lockstep_x11_error;

/// Copies the kinds of X error ignored since the last call (at most `capacity`) and starts counting
/// anew; how many kinds were copied.
int lockstep_x11_take_errors(lockstep_x11_error *taken, int capacity);

/// Unmaps and destroys the window and closes the display connection.
void lockstep_x11_window_close(lockstep_x11_window *window);

#endif
