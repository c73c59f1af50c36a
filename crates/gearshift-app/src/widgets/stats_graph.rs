//! A live graph of one [`Series`]: GtkDrawingArea + cairo, scrolling smoothly on the frame
//! clock while it is mapped and has recent samples.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gtk::glib;
use gtk::prelude::*;
use gtk::subclass::prelude::*;

use crate::history::{compact, nice_ceiling, History, Series, SPAN_US};

/// Line colours (GNOME palette: blue 3, orange 3).
const COLORS: [(f64, f64, f64); 2] = [(0.208, 0.518, 0.894), (1.0, 0.471, 0.0)];
const HEX: [&str; 2] = ["#3584e4", "#ff7800"];

mod imp {
    use super::*;

    #[derive(Default, gtk::CompositeTemplate)]
    #[template(file = "stats_graph.ui")]
    pub struct StatsGraph {
        #[template_child]
        pub title: TemplateChild<gtk::Label>,
        #[template_child]
        pub legend: TemplateChild<gtk::Label>,
        #[template_child]
        pub area: TemplateChild<gtk::DrawingArea>,
        pub series: Cell<Series>,
        pub names: RefCell<Vec<String>>,
        pub unit: RefCell<String>,
        pub history: RefCell<Rc<RefCell<History>>>,
        /// The scale drawn now; eases towards the samples' scale.
        pub scale: Cell<f64>,
        pub tick: RefCell<Option<gtk::TickCallbackId>>,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for StatsGraph {
        const NAME: &'static str = "GearshiftStatsGraph";
        type Type = super::StatsGraph;
        type ParentType = gtk::Box;

        fn class_init(klass: &mut Self::Class) {
            klass.bind_template();
        }

        fn instance_init(obj: &glib::subclass::InitializingObject<Self>) {
            obj.init_template();
        }
    }

    impl ObjectImpl for StatsGraph {
        fn constructed(&self) {
            self.parent_constructed();
            self.scale.set(1.0);
            let obj = self.obj().downgrade();
            self.area.set_draw_func(move |_, cr, w, h| {
                if let Some(obj) = obj.upgrade() {
                    obj.draw(cr, f64::from(w), f64::from(h));
                }
            });
            let obj = self.obj().downgrade();
            self.area.connect_map(move |_| {
                if let Some(obj) = obj.upgrade() {
                    obj.animate(true);
                }
            });
            let obj = self.obj().downgrade();
            self.area.connect_unmap(move |_| {
                if let Some(obj) = obj.upgrade() {
                    obj.animate(false);
                }
            });
        }
    }

    impl WidgetImpl for StatsGraph {}
    impl BoxImpl for StatsGraph {}
}

glib::wrapper! {
    pub struct StatsGraph(ObjectSubclass<imp::StatsGraph>)
        @extends gtk::Box, gtk::Widget,
        @implements gtk::Buildable, gtk::ConstraintTarget, gtk::Orientable;
}

impl Default for StatsGraph {
    fn default() -> Self {
        glib::Object::new()
    }
}

impl StatsGraph {
    /// What to draw: `names` label the lines, `unit` follows the numbers (e.g. "/s").
    pub fn setup(
        &self,
        title: &str,
        series: Series,
        names: Vec<String>,
        unit: &str,
        history: Rc<RefCell<History>>,
    ) {
        let imp = self.imp();
        imp.title.set_label(title);
        imp.series.set(series);
        imp.names.replace(names);
        imp.unit.replace(unit.to_owned());
        imp.history.replace(history);
        self.update_legend();
    }

    /// New samples arrived: refresh the legend and make sure the graph moves.
    pub fn refresh(&self) {
        self.update_legend();
        if self.imp().area.is_mapped() {
            self.animate(true);
        }
    }

    fn update_legend(&self) {
        let imp = self.imp();
        let history = imp.history.borrow().clone();
        let history = history.borrow();
        let series = imp.series.get();
        let latest = history.latest().map(|s| series.values(s));
        let unit = imp.unit.borrow();
        let parts: Vec<String> = imp
            .names
            .borrow()
            .iter()
            .take(series.lines())
            .enumerate()
            .map(|(i, name)| {
                let value = latest.map_or_else(|| "–".to_owned(), |v| compact(v[i]));
                format!(
                    "<span foreground=\"{}\">●</span> {} {}{}",
                    HEX[i],
                    glib::markup_escape_text(name),
                    value,
                    glib::markup_escape_text(&unit)
                )
            })
            .collect();
        imp.legend.set_markup(&parts.join("   "));
    }

    /// Starts or stops redrawing on every frame.
    fn animate(&self, on: bool) {
        let imp = self.imp();
        let mut tick = imp.tick.borrow_mut();
        match (on, tick.is_some()) {
            (true, false) => {
                *tick = Some(imp.area.add_tick_callback(|area, _| {
                    area.queue_draw();
                    glib::ControlFlow::Continue
                }));
            }
            (false, true) => {
                if let Some(id) = tick.take() {
                    id.remove();
                }
            }
            _ => {}
        }
    }

    fn draw(&self, cr: &gtk::cairo::Context, w: f64, h: f64) {
        let imp = self.imp();
        let now = imp
            .area
            .frame_clock()
            .map_or_else(glib::monotonic_time, |c| c.frame_time());
        let history = imp.history.borrow().clone();
        let history = history.borrow();
        let series = imp.series.get();
        let samples = history.samples();

        // Ease the scale towards the peak, so a new maximum does not jump.
        let target = nice_ceiling(history.peak(series));
        let scale = imp.scale.get();
        let scale = if (target - scale).abs() < target * 0.001 {
            target
        } else {
            scale + (target - scale) * 0.15
        };
        imp.scale.set(scale);

        // Grid: quarters.
        let fg = (0.5, 0.5, 0.5);
        cr.set_source_rgba(fg.0, fg.1, fg.2, 0.25);
        cr.set_line_width(1.0);
        for i in 1..4 {
            let y = (h * f64::from(i) / 4.0).round() + 0.5;
            cr.move_to(0.0, y);
            cr.line_to(w, y);
        }
        let _ = cr.stroke();

        // The newest sample sits one interval left of the right edge and the whole line
        // slides left with the frame clock: samples arrive at the right edge, not in jumps.
        let lag = i64::from(crate::client::STATS_INTERVAL_MS) * 1000;
        let x_of = |t: i64| w - (now - lag - t) as f64 / SPAN_US as f64 * w;
        let y_of = |v: f64| h - 2.0 - (v / scale).min(1.05) * (h - 4.0);
        for line in (0..series.lines()).rev() {
            let points: Vec<(f64, f64)> = samples
                .iter()
                .map(|s| (x_of(s.time_us), y_of(series.values(s)[line])))
                .collect();
            let Some(&(x0, y0)) = points.first() else {
                continue;
            };
            cr.move_to(x0, y0);
            for pair in points.windows(2) {
                let ((xa, ya), (xb, yb)) = (pair[0], pair[1]);
                let mid = (xa + xb) / 2.0;
                cr.curve_to(mid, ya, mid, yb, xb, yb);
            }
            let (r, g, b) = COLORS[line];
            cr.set_source_rgb(r, g, b);
            cr.set_line_width(2.0);
            let _ = cr.stroke_preserve();
            if let Some(&(xl, _)) = points.last() {
                cr.line_to(xl, h);
                cr.line_to(x0, h);
                cr.close_path();
                cr.set_source_rgba(r, g, b, 0.15);
                let _ = cr.fill();
            }
        }
        cr.new_path();

        // Nothing new for a whole span: stop redrawing until samples come again.
        let stale = samples
            .back()
            .is_none_or(|s| now - s.time_us > SPAN_US + lag);
        if stale && (scale - target).abs() < f64::EPSILON {
            let this = self.downgrade();
            glib::idle_add_local_once(move || {
                if let Some(this) = this.upgrade() {
                    this.animate(false);
                }
            });
        }
    }
}
