//! AS3 declarations on the real `portcullis serve`.

mod declare;
mod modes;
