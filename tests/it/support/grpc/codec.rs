//! A tonic codec that passes protobuf bytes through untouched: the tests build and read messages
//! with prost-reflect against demo.proto, and can send bytes no generated client would.

use bytes::{Buf as _, BufMut as _, Bytes};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

#[derive(Clone, Copy, Debug, Default)]
pub struct BytesCodec;

#[derive(Clone, Copy, Debug, Default)]
pub struct BytesEncoder;

#[derive(Clone, Copy, Debug, Default)]
pub struct BytesDecoder;

impl Encoder for BytesEncoder {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for BytesDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        let n = src.remaining();
        Ok(Some(src.copy_to_bytes(n)))
    }
}

impl Codec for BytesCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = BytesEncoder;
    type Decoder = BytesDecoder;

    fn encoder(&mut self) -> BytesEncoder {
        BytesEncoder
    }

    fn decoder(&mut self) -> BytesDecoder {
        BytesDecoder
    }
}
