#include "CLockstepX11.h"

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/Xrandr.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct lockstep_x11_window {
    Display *display;
    Window window;
    Cursor cursor;
    Atom delete_window;
    volatile int lost;
};

static pthread_once_t threads_once = PTHREAD_ONCE_INIT;

/// The X errors ignored since they were last taken, by kind (error, request, minor request).
#define ERROR_KINDS 16
static pthread_mutex_t errors_lock = PTHREAD_MUTEX_INITIALIZER;
static lockstep_x11_error errors[ERROR_KINDS];

/// Xlib's default error handler ends the process; one video sink's stale request (ximagesink
/// detaching shared memory the server already dropped) must not take the node down with it. Each
/// is counted by kind, for the node to log in its own format (lockstep_x11_take_errors), instead
/// of a line per error on standard error.
static int report_error(Display *display, XErrorEvent *event) {
    char text[sizeof errors[0].text] = "";
    XGetErrorText(display, event->error_code, text, sizeof text);
    pthread_mutex_lock(&errors_lock);
    int slot = ERROR_KINDS - 1;
    for (int i = 0; i < ERROR_KINDS; i++) {
        lockstep_x11_error *kind = &errors[i];
        if (kind->count == 0 || (kind->code == event->error_code && kind->request == event->request_code &&
                                 kind->minor == event->minor_code)) {
            slot = i;
            break;
        }
    }
    lockstep_x11_error *kind = &errors[slot];
    if (kind->count == 0) {
        kind->code = event->error_code;
        kind->request = event->request_code;
        kind->minor = event->minor_code;
        snprintf(kind->text, sizeof kind->text, "%s", text);
    }
    kind->count++;
    pthread_mutex_unlock(&errors_lock);
    return 0;
}

int lockstep_x11_take_errors(lockstep_x11_error *taken, int capacity) {
    pthread_mutex_lock(&errors_lock);
    int count = 0;
    for (int i = 0; i < ERROR_KINDS && errors[i].count > 0; i++) {
        if (count < capacity) taken[count++] = errors[i];
        errors[i].count = 0;
    }
    pthread_mutex_unlock(&errors_lock);
    return count;
}

static void init_threads(void) {
    XInitThreads();
    XSetErrorHandler(report_error);
}

/// Called instead of exit() when the X server goes away: the node keeps running without its window.
static void connection_lost(Display *display, void *data) {
    (void)display;
    ((lockstep_x11_window *)data)->lost = 1;
}

static Display *open_display(const char *name, char *error, size_t error_size) {
    pthread_once(&threads_once, init_threads);
    Display *display = XOpenDisplay(name);
    if (display == NULL) {
        const char *shown = name != NULL ? name : getenv("DISPLAY");
        snprintf(error, error_size, "cannot open X display \"%s\"%s", shown != NULL ? shown : "",
                 shown == NULL ? " (DISPLAY is unset)" : "");
    }
    return display;
}

int lockstep_x11_monitors(const char *name, lockstep_x11_monitor *monitors, int capacity, char *error, size_t error_size) {
    Display *display = open_display(name, error, error_size);
    if (display == NULL) return -1;
    int count = 0;
    XRRMonitorInfo *list = XRRGetMonitors(display, DefaultRootWindow(display), False, &count);
    int written = 0;
    for (int i = 0; list != NULL && i < count && written < capacity; i++) {
        lockstep_x11_monitor *monitor = &monitors[written++];
        char *atom = XGetAtomName(display, list[i].name);
        snprintf(monitor->name, sizeof monitor->name, "%s", atom != NULL ? atom : "");
        if (atom != NULL) XFree(atom);
        monitor->rect = (lockstep_x11_rect){list[i].x, list[i].y, list[i].width, list[i].height};
        monitor->primary = list[i].primary;
    }
    if (list != NULL) XRRFreeMonitors(list);
    if (written == 0 && capacity > 0) {
        // No RandR monitors (an old server): the whole screen is one.
        int screen = DefaultScreen(display);
        snprintf(monitors[0].name, sizeof monitors[0].name, "%s", "screen");
        monitors[0].rect = (lockstep_x11_rect){0, 0, DisplayWidth(display, screen), DisplayHeight(display, screen)};
        monitors[0].primary = 1;
        written = 1;
    }
    XCloseDisplay(display);
    return written;
}

int lockstep_x11_mode_at(const char *name, int x, int y, lockstep_x11_mode *mode, char *error, size_t error_size) {
    Display *display = open_display(name, error, error_size);
    if (display == NULL) return -1;
    int found = 0;
    XRRScreenResources *resources = XRRGetScreenResourcesCurrent(display, DefaultRootWindow(display));
    for (int i = 0; resources != NULL && i < resources->ncrtc && !found; i++) {
        XRRCrtcInfo *crtc = XRRGetCrtcInfo(display, resources, resources->crtcs[i]);
        if (crtc == NULL) continue;
        int inside = crtc->mode != None && x >= crtc->x && x < crtc->x + (int)crtc->width && y >= crtc->y &&
                     y < crtc->y + (int)crtc->height;
        for (int m = 0; inside && m < resources->nmode; m++) {
            const XRRModeInfo *info = &resources->modes[m];
            if (info->id != crtc->mode) continue;
            double lines = info->vTotal;
            if (info->modeFlags & RR_DoubleScan) lines *= 2;
            if (info->modeFlags & RR_Interlace) lines /= 2;
            mode->width = (int)info->width;
            mode->height = (int)info->height;
            mode->refresh_mhz = info->hTotal > 0 && lines > 0
                ? (long)((double)info->dotClock * 1000.0 / ((double)info->hTotal * lines) + 0.5) : 0;
            mode->output[0] = 0;
            if (crtc->noutput > 0) {
                XRROutputInfo *output = XRRGetOutputInfo(display, resources, crtc->outputs[0]);
                if (output != NULL) {
                    snprintf(mode->output, sizeof mode->output, "%s", output->name);
                    XRRFreeOutputInfo(output);
                }
            }
            found = 1;
            break;
        }
        XRRFreeCrtcInfo(crtc);
    }
    if (resources != NULL) XRRFreeScreenResources(resources);
    XCloseDisplay(display);
    if (!found) snprintf(error, error_size, "no RandR output shows the point (%d, %d)", x, y);
    return found ? 0 : -1;
}

static void set_atom_property(Display *display, Window window, const char *name, const char *value) {
    Atom atom = XInternAtom(display, value, False);
    XChangeProperty(display, window, XInternAtom(display, name, False), XA_ATOM, 32, PropModeReplace,
                    (unsigned char *)&atom, 1);
}

static void set_title(Display *display, Window window, const char *title) {
    XStoreName(display, window, title);
    XChangeProperty(display, window, XInternAtom(display, "_NET_WM_NAME", False),
                    XInternAtom(display, "UTF8_STRING", False), 8, PropModeReplace, (const unsigned char *)title,
                    (int)strlen(title));
    XClassHint class_hint = {.res_name = "wallnode", .res_class = "Lockstep"};
    XSetClassHint(display, window, &class_hint);
}

/// No title bar or border: _MOTIF_WM_HINTS with the decorations flag and none set.
static void remove_decorations(Display *display, Window window) {
    long hints[5] = {2 /* MWM_HINTS_DECORATIONS */, 0, 0, 0, 0};
    Atom atom = XInternAtom(display, "_MOTIF_WM_HINTS", False);
    XChangeProperty(display, window, atom, atom, 32, PropModeReplace, (unsigned char *)hints, 5);
}

static Cursor blank_cursor(Display *display, Window window) {
    static char bits[1] = {0};
    Pixmap pixmap = XCreateBitmapFromData(display, window, bits, 1, 1);
    XColor black = {0};
    Cursor cursor = XCreatePixmapCursor(display, pixmap, pixmap, &black, &black, 0, 0);
    XFreePixmap(display, pixmap);
    return cursor;
}

static long elapsed_ms(const struct timespec *since) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/// Asks the window manager (EWMH) to span `monitor_index` when fullscreen.
static void send_fullscreen_monitors(Display *display, Window window, int monitor_index) {
    XEvent event = {0};
    event.xclient.type = ClientMessage;
    event.xclient.window = window;
    event.xclient.message_type = XInternAtom(display, "_NET_WM_FULLSCREEN_MONITORS", False);
    event.xclient.format = 32;
    for (int i = 0; i < 4; i++) event.xclient.data.l[i] = monitor_index;
    event.xclient.data.l[4] = 1;
    XSendEvent(display, DefaultRootWindow(display), False, SubstructureRedirectMask | SubstructureNotifyMask, &event);
}

lockstep_x11_window *lockstep_x11_window_open(const char *name, const char *title, lockstep_x11_rect rect,
                                              int fullscreen, int monitor_index, int map_timeout_ms, char *error,
                                              size_t error_size) {
    Display *display = open_display(name, error, error_size);
    if (display == NULL) return NULL;
    lockstep_x11_window *self = calloc(1, sizeof *self);
    if (self == NULL) {
        XCloseDisplay(display);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    self->display = display;
    XSetIOErrorExitHandler(display, connection_lost, self);
    int screen = DefaultScreen(display);
    XSetWindowAttributes attributes = {0};
    attributes.background_pixel = BlackPixel(display, screen);
    attributes.border_pixel = BlackPixel(display, screen);
    attributes.event_mask = StructureNotifyMask;
    self->window = XCreateWindow(display, RootWindow(display, screen), rect.x, rect.y, (unsigned)rect.width,
                                 (unsigned)rect.height, 0, CopyFromParent, InputOutput, CopyFromParent,
                                 CWBackPixel | CWBorderPixel | CWEventMask, &attributes);
    set_title(display, self->window, title);
    remove_decorations(display, self->window);
    XSizeHints *size = XAllocSizeHints();
    if (size != NULL) {
        // The position and size are the user's (the config's): window managers keep them.
        size->flags = USPosition | USSize | PMinSize | PMaxSize;
        size->x = rect.x;
        size->y = rect.y;
        size->width = size->min_width = size->max_width = rect.width;
        size->height = size->min_height = size->max_height = rect.height;
        if (fullscreen) size->flags = USPosition | USSize;
        XSetWMNormalHints(display, self->window, size);
        XFree(size);
    }
    self->delete_window = XInternAtom(display, "WM_DELETE_WINDOW", False);
    XSetWMProtocols(display, self->window, &self->delete_window, 1);
    set_atom_property(display, self->window, "_NET_WM_WINDOW_TYPE", "_NET_WM_WINDOW_TYPE_NORMAL");
    if (fullscreen) set_atom_property(display, self->window, "_NET_WM_STATE", "_NET_WM_STATE_FULLSCREEN");
    self->cursor = blank_cursor(display, self->window);
    XDefineCursor(display, self->window, self->cursor);
    XMapRaised(display, self->window);
    XFlush(display);

    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    int mapped = 0;
    while (!mapped && elapsed_ms(&started) < map_timeout_ms) {
        while (XPending(display) > 0) {
            XEvent event;
            XNextEvent(display, &event);
            if (event.type == MapNotify && event.xmap.window == self->window) mapped = 1;
        }
        if (!mapped) {
            struct pollfd fd = {.fd = ConnectionNumber(display), .events = POLLIN};
            poll(&fd, 1, 20);
        }
    }
    if (fullscreen && monitor_index >= 0) send_fullscreen_monitors(display, self->window, monitor_index);
    // A window manager may place the window after mapping it; the position asked for wins.
    if (!fullscreen) XMoveResizeWindow(display, self->window, rect.x, rect.y, (unsigned)rect.width, (unsigned)rect.height);
    XSync(display, False);
    return self;
}

unsigned long lockstep_x11_window_id(lockstep_x11_window *self) { return (unsigned long)self->window; }

lockstep_x11_rect lockstep_x11_window_geometry(lockstep_x11_window *self, int *viewable) {
    lockstep_x11_rect rect = {0, 0, 0, 0};
    *viewable = 0;
    if (self->lost) return rect;
    XWindowAttributes attributes;
    if (!XGetWindowAttributes(self->display, self->window, &attributes)) return rect;
    Window child;
    int x = 0, y = 0;
    XTranslateCoordinates(self->display, self->window, attributes.root, 0, 0, &x, &y, &child);
    *viewable = attributes.map_state == IsViewable;
    return (lockstep_x11_rect){x, y, attributes.width, attributes.height};
}

void lockstep_x11_window_clear(lockstep_x11_window *self) {
    if (self->lost) return;
    XClearWindow(self->display, self->window);
    XFlush(self->display);
}

int lockstep_x11_window_pump(lockstep_x11_window *self, int timeout_ms) {
    if (self->lost) return -1;
    struct pollfd fd = {.fd = ConnectionNumber(self->display), .events = POLLIN};
    if (XPending(self->display) == 0) poll(&fd, 1, timeout_ms);
    if (self->lost) return -1;
    while (!self->lost && XPending(self->display) > 0) {
        XEvent event;
        XNextEvent(self->display, &event);
        // WM_DELETE_WINDOW is refused by not acting on it: a wall's window closes with its node.
        (void)event;
    }
    return self->lost ? -1 : 0;
}

void lockstep_x11_window_close(lockstep_x11_window *self) {
    if (self == NULL) return;
    if (!self->lost) {
        XUndefineCursor(self->display, self->window);
        XFreeCursor(self->display, self->cursor);
        XDestroyWindow(self->display, self->window);
        XCloseDisplay(self->display);
    }
    free(self);
}
